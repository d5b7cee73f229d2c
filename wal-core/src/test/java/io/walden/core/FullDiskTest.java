package io.walden.core;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real full disk: a 512 KiB tmpfs mounted for the test (needs root, as on the project's machines and CI;
 * skipped where mounting is not allowed). Preparing a segment fails with a clear error before anything is
 * reserved; acknowledged records stay readable; appends resume once space is freed.
 */
@EnabledOnOs(OS.LINUX)
class FullDiskTest {
    @TempDir
    Path dir;
    private Path mount;
    private boolean mounted;

    @BeforeEach
    void mountSmallFileSystem() throws Exception {
        mount = dir.resolve("small-disk");
        Files.createDirectories(mount);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mount.toString())
                .redirectErrorStream(true).start();
        mounted = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        assumeTrue(mounted, "cannot mount a tmpfs here (not root?): " + new String(p.getInputStream().readAllBytes()));
    }

    @AfterEach
    void unmount() throws Exception {
        if (mounted) {
            new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldRefuseAppendsCleanlyWhenTheDiskIsFullAndResumeOnceSpaceIsFreed() throws Exception {
        WalConfig config = TestLogs.small(mount.resolve("log")).spareSegments(0).build();
        List<Long> acknowledged = new ArrayList<>();
        try (Wal wal = Wal.open(config)) {
            WalException refused = null;
            for (int i = 0; i < 10_000 && refused == null; i++) {
                try {
                    acknowledged.add(wal.append(new byte[1000], Durability.LOCAL));
                } catch (WalException e) {
                    refused = e;
                }
            }
            assertThat(refused).as("the disk filled up").isNotNull();
            assertThat(refused).hasMessageContaining("No space left on device").hasMessageContaining("nothing was written");
            assertThat(wal.status().isFailed()).as("a full disk is not a failed force").isFalse();
            long end = wal.insertLsn();
            try (WalReader r = wal.reader(acknowledged.get(0))) {
                int n = 0;
                while (r.next() != null) {
                    n++;
                }
                assertThat(n).as("every acknowledged record still reads back").isEqualTo(acknowledged.size());
            }
            assertThat(wal.insertLsn()).as("the refused append reserved nothing").isEqualTo(end);

            wal.truncateBefore(wal.flushedLsn());
            assertThat(Eventually.holds(() -> {
                try {
                    wal.append(new byte[1000], Durability.LOCAL);
                    return true;
                } catch (WalException e) {
                    return false;
                }
            })).as("appends resume once truncation freed space").isTrue();
        }
    }
}
