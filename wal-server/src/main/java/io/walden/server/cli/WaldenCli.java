package io.walden.server.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code walden} command line: {@code java -jar walden.jar <command>}. Each subcommand has {@code --help}.
 */
@Command(name = "walden", mixinStandardHelpOptions = true, version = "Walden 0.1.0",
        description = "A durable write-ahead log for the JVM.",
        subcommands = {ServeCommand.class, DemoCommand.class, DumpCommand.class, VerifyCommand.class, RestoreCommand.class, TestFsyncCommand.class,
                CommandLine.HelpCommand.class})
public final class WaldenCli implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.setProperty("chronicle.analytics.disable", "true");
        System.setProperty("chronicle.announcer.disable", "true");
        System.exit(new CommandLine(new WaldenCli()).execute(args));
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
