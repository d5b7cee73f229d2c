package io.walden.server.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which paths {@code walden append} and {@code walden tail} call: today's without {@code --log} (and with
 * {@code --log default}), a named log's under {@code /v1/logs/<log>} with it. The paths come from {@code LogPaths};
 * ConsoleToolsIT drives the same choice against a server. Costs milliseconds (no process, no server).
 */
class LogPathsChoiceTest {

    private static AppendCommand append(String... args) {
        AppendCommand c = new AppendCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    private static TailCommand tail(String... args) {
        TailCommand c = new TailCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void appendWithoutALogPostsToTodaysBatchPath() {
        assertThat(append().batchPath()).isEqualTo("/v1/records/batch");
        assertThat(append("--log", "default").batchPath()).isEqualTo("/v1/records/batch");
    }

    @Test
    void appendToANamedLogPostsToItsBatchPath() {
        assertThat(append("--log", "orders").batchPath()).isEqualTo("/v1/logs/orders/records/batch");
    }

    @Test
    void tailWithoutALogReadsTodaysRecordsAndCursors() {
        assertThat(tail().paths().records()).isEqualTo("/v1/records");
        assertThat(tail().paths().cursor("reporting")).isEqualTo("/v1/cursors/reporting");
        assertThat(tail("--log", "default").paths().records()).isEqualTo("/v1/records");
    }

    @Test
    void tailOfANamedLogReadsItsRecordsAndItsCursors() {
        TailCommand c = tail("--log", "audit.2026_q4-eu");
        assertThat(c.paths().records()).isEqualTo("/v1/logs/audit.2026_q4-eu/records");
        assertThat(c.paths().cursor("reporting")).isEqualTo("/v1/logs/audit.2026_q4-eu/cursors/reporting");
    }

    @Test
    void aNameNoLogCanHaveIsTheUsersMistakeNamingTheFlag() {
        for (String bad : new String[] {"Orders", "../data", "a/b", "", ".hidden", "x".repeat(129)}) {
            assertThatThrownBy(() -> append("--log", bad).batchPath()).as(bad)
                    .isInstanceOf(UserError.class).hasMessageStartingWith("--log: '" + bad + "' is not a log name");
            assertThatThrownBy(() -> tail("--log", bad).paths()).as(bad).isInstanceOf(UserError.class);
        }
    }
}
