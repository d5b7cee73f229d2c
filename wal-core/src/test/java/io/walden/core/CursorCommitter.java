package io.walden.core;

import java.nio.file.Path;

/**
 * Child-JVM main for the cursor crash test: appends records and commits a cursor after each, forever, printing
 * {@code C <lsn>} only once the commit returned (so once it was forced).
 *
 * <p>Args: directory.
 */
public final class CursorCommitter {
    static final String NAME = "consumer-1";

    private CursorCommitter() {
    }

    public static void main(String[] args) {
        Wal wal = Wal.open(WalConfig.builder(Path.of(args[0])).segmentSize(TestLogs.SMALL_SEGMENT).durability(Durability.LOCAL).build());
        wal.cursors().create(NAME, wal.insertLsn());
        System.out.println("READY");
        System.out.flush();
        for (long i = 0; ; i++) {
            wal.append(TestLogs.bytes("event " + i), Durability.OFF);
            long next = wal.insertLsn();
            wal.cursors().commit(NAME, next);
            System.out.println("C " + next);
        }
    }
}
