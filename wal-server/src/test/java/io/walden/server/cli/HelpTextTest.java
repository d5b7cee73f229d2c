package io.walden.server.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code walden --help} and each command's: summaries that end as sentences do, and addresses and URIs never broken. */
class HelpTextTest {
    /** A URI or an address pattern, as the help writes them. */
    private static final Pattern URI = Pattern.compile("[a-z0-9]+://[^\\s,;)]*[^\\s,;).]|HOST:PORT(\\[,HOST:PORT\\.\\.\\.])?/PATH");

    private static Map<String, CommandLine> commands() {
        return WaldenCli.commandLine().getSubcommands();
    }

    @Test
    void everyCommandsSummaryEndsAsASentenceDoes() {
        for (Map.Entry<String, CommandLine> c : commands().entrySet()) {
            String[] description = c.getValue().getCommandSpec().usageMessage().description();
            assertThat(description).as(c.getKey()).isNotEmpty();
            assertThat(description[0]).as(c.getKey() + "'s summary").doesNotEndWith(",").endsWith(".");
        }
    }

    @Test
    void dumpVerifyAndTheOperationsGuideSayTheSameOfARunningServersDirectory() throws Exception {
        String guide = String.join(" ", Files.readString(Path.of("..", "docs", "operations.md"))
                .split("\\s+"));
        assertThat(guide).contains(DumpCommand.LIVE);
        for (String command : new String[] {"dump", "verify"}) {
            assertThat(String.join(" ", commands().get(command).getCommandSpec().usageMessage().description()))
                    .as(command).contains(DumpCommand.LIVE);
        }
    }

    @Test
    void dumpVerifyAndTheOperationsGuideSayTheSameOfANamedLogsJournal() throws Exception {
        String guide = String.join(" ", Files.readString(Path.of("..", "docs", "operations.md")).split("\\s+"));
        assertThat(guide).contains(DumpCommand.JOURNALED);
        for (String command : new String[] {"dump", "verify"}) {
            assertThat(String.join(" ", commands().get(command).getCommandSpec().usageMessage().description()))
                    .as(command).contains(DumpCommand.JOURNALED);
        }
    }

    /** What the command's help is written from: its description, its options' and its commands' summaries (unwrapped). */
    private static String source(CommandLine c) {
        StringBuilder text = new StringBuilder(String.join(" ", c.getCommandSpec().usageMessage().description()));
        for (CommandLine.Model.OptionSpec o : c.getCommandSpec().options()) {
            text.append(' ').append(String.join(" ", o.description()));
        }
        for (CommandLine sub : c.getSubcommands().values()) { // their summaries, as the command list shows them
            text.append(' ').append(sub.getCommandSpec().usageMessage().description()[0]);
        }
        return text.toString();
    }

    @Test
    void noUriOrAddressInAnyHelpIsBrokenAcrossLines() {
        List<CommandLine> all = new ArrayList<>(commands().values());
        all.add(WaldenCli.commandLine());
        int checked = 0;
        for (CommandLine c : all) {
            String help = c.getUsageMessage();
            for (String line : help.split("\n")) {
                assertThat(line.length()).as(line).isLessThanOrEqualTo(WaldenCli.HELP_WIDTH);
            }
            Matcher m = URI.matcher(source(c));
            while (m.find()) {
                assertThat(help).as("'" + m.group() + "' whole on one line of " + c.getCommandName() + "'s help")
                        .contains(m.group());
                checked++;
            }
        }
        assertThat(checked).as("URIs and addresses checked").isGreaterThan(5);
    }
}
