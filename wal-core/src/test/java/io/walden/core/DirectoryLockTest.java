package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class DirectoryLockTest {
    @TempDir
    Path dir;

    /** Child-JVM main: tries to open the log and prints what happened. */
    public static final class OpenAttempt {
        public static void main(String[] args) {
            try (Wal wal = Wal.open(WalConfig.builder(Path.of(args[0])).segmentSize(TestLogs.SMALL_SEGMENT).build())) {
                System.out.println("OPENED " + Lsn.format(wal.insertLsn()));
            } catch (WalLockedException e) {
                System.out.println("LOCKED " + e.getMessage());
                System.exit(3);
            }
        }
    }

    @Test
    void shouldRefuseASecondProcessOnTheSameDirectory() throws Exception {
        Path log = dir.resolve("log");
        try (Wal wal = Wal.open(TestLogs.small(log).build())) {
            wal.append(TestLogs.bytes("held"));
            try (ChildJvm child = ChildJvm.start(OpenAttempt.class, dir.resolve("child.err"), log.toString())) {
                assertThat(child.waitFor(60, TimeUnit.SECONDS)).as(Files.readString(dir.resolve("child.err"))).isEqualTo(3);
                assertThat(child.lines()).anySatisfy(l -> assertThat(l).startsWith("LOCKED").contains("another process"));
            }
        }
        try (ChildJvm child = ChildJvm.start(OpenAttempt.class, dir.resolve("child.err"), log.toString())) {
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isZero();
            assertThat(child.lines()).anySatisfy(l -> assertThat(l).startsWith("OPENED"));
        }
    }
}
