package io.walden.server.cli;

import io.walden.core.WalException;
import io.walden.server.WaldenServer;
import io.walden.server.config.ConfigTemplate;
import io.walden.server.config.ServerConfig;
import io.walden.server.config.ServerSettings;
import io.walden.server.config.Setting;
import io.walden.server.http.LeakDetection;
import io.walden.server.logging.ConsoleLines;
import io.walden.server.logging.ServerLogging;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import static io.walden.server.config.ServerSettings.TLS_CERT;

/**
 * Runs the sidecar until SIGTERM/SIGINT, then shuts down cleanly (nothing acknowledged is lost). Its options are the
 * settings of {@link ServerSettings}, added to this command's spec by {@link #addSettings}: one flag per setting (and
 * a hidden one per older name), with the setting's help and default.
 */
@Command(name = "serve", mixinStandardHelpOptions = true, abbreviateSynopsis = true, usageHelpWidth = WaldenCli.HELP_WIDTH,
        sortOptions = false,
        description = {"Run a Walden log behind an HTTP data API and admin API (docs/http-api.md).",
                "Settings come from defaults, then --config, then flags; sizes take units (64MiB), durations too (200ms, 60s).",
                "Stops cleanly on SIGTERM.",
                "",
                "Open by default: HTTP on 127.0.0.1:7400 without a token (any local process may append and read), and",
                "replication on 127.0.0.1:7401 without a secret (any local process may stream the whole log).",
                "--auth-token (or --auth-tokens, tokens with roles) closes the first; with it, --replication-secret (or",
                "mutual TLS) is required for the second (or --replication-listen none). Off loopback, HTTP needs a token,",
                "and replication needs TLS and authentication.",
                ""})
final class ServeCommand implements Callable<Integer> {
    /** Width of the description column at {@link WaldenCli#HELP_WIDTH}: help is wrapped here, between words only. */
    private static final int DESCRIPTION_WIDTH = WaldenCli.HELP_WIDTH - 34;

    @Option(names = "--config", paramLabel = "FILE", description = "YAML file with any of the settings below (flags win over it).")
    Path configFile;

    @CommandLine.Spec
    CommandSpec spec;

    /** Adds an option per setting to {@code serve}'s spec, before anything is parsed. */
    static void addSettings(CommandSpec serve) {
        for (Setting<?> s : ServerSettings.ALL) {
            serve.addOption(option(s, "--" + s.key(), false));
            for (String alias : s.aliases()) {
                serve.addOption(option(s, "--" + alias, true));
            }
        }
        // Defaults shown in --help are the settings' own; a flag not given is not set (ServerConfig layers them).
        serve.defaultValueProvider(arg -> arg instanceof OptionSpec o && o.userObject() instanceof Setting<?> s
                ? s.defaultValue() : null);
    }

    private static OptionSpec option(Setting<?> s, String name, boolean alias) {
        List<String> help = new ArrayList<>(List.of(ConfigTemplate.wrap(s.help() + (alias ? " (The older name of --" + s.key() + ".)" : ""),
                DESCRIPTION_WIDTH)));
        if (s.defaultValue() != null && !alias) {
            help.add("Default: ${DEFAULT-VALUE}."); // a line of its own: never broken, whatever the value's length
        }
        OptionSpec.Builder b = OptionSpec.builder(name).type(String.class).paramLabel(s.label()).userObject(s)
                .description(help.toArray(new String[0])).hidden(alias);
        if (s.flag()) {
            b.arity("0..1").fallbackValue("true");
        }
        return b.build();
    }

    /** The flags given on the command line, by name without dashes (an older name as given). */
    private Map<String, String> givenFlags() {
        Map<String, String> flags = new LinkedHashMap<>();
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        for (OptionSpec o : spec.options()) {
            if (o.userObject() instanceof Setting<?> && parsed.hasMatchedOption(o)) {
                flags.put(o.longestName().substring(2), o.getValue());
            }
        }
        return flags;
    }

    @Override
    public Integer call() throws Exception {
        ServerConfig config;
        try {
            config = ServerConfig.load(configFile, givenFlags());
        } catch (IllegalArgumentException e) {
            System.err.println("walden serve: " + e.getMessage()); // the log format is not known yet: plain
            return 2;
        }
        String logName = config.dataDir().toAbsolutePath().normalize().getFileName().toString();
        ServerLogging.configure(config.get(ServerSettings.LOG_LEVEL), config.get(ServerSettings.LOG_FORMAT), logName,
                config.get(ServerSettings.NAME));
        ConsoleLines console = new ConsoleLines(config.get(ServerSettings.LOG_FORMAT), logName,
                config.get(ServerSettings.NAME), ServeCommand.class);
        LeakDetection.applyForServe();
        WaldenServer server = new WaldenServer(config);
        try {
            server.start(); // a start that fails has closed what it opened
        } catch (IllegalStateException | IllegalArgumentException | WalException e) {
            System.err.println(console.error("walden serve: ", e.getMessage()));
            return 2;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "walden-shutdown"));
        System.out.println(console.info("walden: ", "serving on " + (config.get(TLS_CERT) != null ? "https" : "http")
                + "://" + server.boundAddress().getAddress().getHostAddress() + ":" + server.boundAddress().getPort()
                + " (data " + config.dataDir().toAbsolutePath() + ")"));
        System.out.flush();
        stopped.await();
        return 0;
    }
}
