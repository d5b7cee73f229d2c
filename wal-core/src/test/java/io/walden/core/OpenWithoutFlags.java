package io.walden.core;

import java.nio.file.Path;

/** Child-JVM main for {@link JvmFlagsTest}: opens a log and prints what happened, on one line. */
public final class OpenWithoutFlags {
    private OpenWithoutFlags() {
    }

    public static void main(String[] args) {
        try (Wal wal = Wal.open(TestLogs.small(Path.of(args[0])).build())) {
            System.out.println("OPENED " + wal.insertLsn());
        } catch (Throwable e) {
            System.out.println("REFUSED " + e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
