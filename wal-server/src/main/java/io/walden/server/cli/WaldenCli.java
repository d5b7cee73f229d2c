package io.walden.server.cli;

import io.walden.core.WalLockedException;
import io.walden.server.BuildInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * The {@code walden} command line: {@code java -jar walden.jar <command>}. Each subcommand has {@code --help}.
 */
@Command(name = "walden", mixinStandardHelpOptions = true, versionProvider = WaldenCli.Version.class, usageHelpWidth = WaldenCli.HELP_WIDTH,
        description = "A durable write-ahead log for the JVM.",
        subcommands = {ServeCommand.class, AppendCommand.class, TailCommand.class, DemoCommand.class, DumpCommand.class, VerifyCommand.class, RestoreCommand.class, TestFsyncCommand.class, HashTokenCommand.class,
                CommandLine.HelpCommand.class})
public final class WaldenCli implements Runnable {
    /** Width of the help texts: wide enough that an address or a URI in a description never has to break. */
    static final int HELP_WIDTH = 110;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
        System.exit(commandLine().execute(args));
    }

    /** The command line with every subcommand, {@code serve}'s settings added to it ({@link ServeCommand#addSettings}). */
    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new WaldenCli());
        ServeCommand.addSettings(cli.getSubcommands().get("serve").getCommandSpec());
        cli.setExecutionExceptionHandler(WaldenCli::userErrorsInOneLine);
        return cli;
    }

    /**
     * A user's mistake (a bad value, a directory another process holds, one in the wrong state) is one line naming
     * the problem, and exit status 2; anything else is a defect, shown with its stack trace (status 2 as well).
     */
    private static int userErrorsInOneLine(Exception e, CommandLine command, CommandLine.ParseResult parsed) {
        if (e instanceof UserError || e instanceof IllegalArgumentException || e instanceof WalLockedException) {
            command.getErr().println("walden " + command.getCommandName() + ": " + e.getMessage());
            return 2;
        }
        command.getErr().println("walden " + command.getCommandName() + " failed: " + e);
        e.printStackTrace(command.getErr());
        return 2;
    }

    /** {@code walden --version}: the build's version (from the Maven project) and the Java running it. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"walden " + BuildInfo.version(),
                    "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")"};
        }
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
