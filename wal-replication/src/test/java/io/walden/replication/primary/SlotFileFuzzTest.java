package io.walden.replication.primary;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzz target for the replication slots file (docs/format.md): whatever it holds, reading it never fails (a
 * malformed line costs only its slot), every slot read has a name and a valid LSN, and what was read survives being
 * written back and read again unchanged. Its corpus runs with the unit tests; {@code mvn verify} fuzzes it briefly.
 */
class SlotFileFuzzTest {
    private static Path dir;

    private static synchronized Path dir() throws IOException {
        if (dir == null) {
            dir = Files.createTempDirectory("walden-fuzz-slots");
            dir.toFile().deleteOnExit();
        }
        return dir;
    }

    @FuzzTest(maxDuration = "5s")
    void slotsReadBackAsTheyAreWrittenWhateverTheFileHeld(byte[] bytes) throws IOException {
        Path d = dir();
        Files.write(d.resolve(SlotFile.NAME), bytes);
        Map<String, Long> slots = SlotFile.read(d);
        slots.forEach((name, lsn) -> {
            assertThat(name).isNotBlank().doesNotContain("\n", "\r").isEqualTo(name.strip());
            assertThat(lsn).isNotNegative();
        });
        SlotFile.write(d, slots);
        assertThat(SlotFile.read(d)).isEqualTo(slots);
    }
}
