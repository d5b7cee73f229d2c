package io.walden.core;

import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * Child-JVM main for {@link MixedLevelCrashTest}: one thread per durability level appends forever (record type =
 * the level's ordinal + 1) and prints {@code A <type> <seq> <lsn>} after each append returned; the OFF thread
 * appends in bursts and, {@code 50 ms} after each burst (far beyond the 2 ms offWriteDelay), prints
 * {@code S <lsn of the burst's last record>}; a reader at WRITTEN visibility tails the log from the start and
 * prints {@code R <type> <seq> <lsn>} for each record it saw whose bytes it checked, or {@code BAD <lsn>}.
 *
 * <p>Args: directory, segment size, WAL buffers size.
 */
public final class MixedLevelAppender {
    private MixedLevelAppender() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(Long.parseLong(args[1])).walBuffers(Long.parseLong(args[2])).build());
        long startSeq = wal.insertLsn(); // distinct seqs per run
        long readFrom = wal.insertLsn();
        System.out.println("READY");
        System.out.flush();
        for (Durability level : Durability.values()) {
            int type = level.ordinal() + 1;
            Thread t = new Thread(() -> {
                for (long seq = startSeq; ; seq++) {
                    long lsn = wal.append(type, CrashingAppender.payload(type, seq), level);
                    print("A " + type + " " + seq + " " + lsn);
                    if (level == Durability.OFF && seq % 10 == 9) {
                        // A sleep: the background writer writes OFF records within its offWriteDelay (a rule of
                        // time), so the burst is written, and survives the kill of this process, once S is printed.
                        sleep(50);
                        print("S " + lsn);
                    }
                }
            }, "appender-" + level);
            t.setDaemon(true);
            t.start();
        }
        try (WalReader reader = wal.reader(readFrom, WalReader.Visibility.WRITTEN)) {
            while (true) {
                WalRecord r = reader.poll(1, TimeUnit.SECONDS);
                if (r == null) {
                    continue;
                }
                long seq = r.payloadView().order(ByteOrder.BIG_ENDIAN).getLong(0);
                boolean intact = Arrays.equals(r.payload(), CrashingAppender.payload(r.type(), seq));
                print(intact ? "R " + r.type() + " " + seq + " " + r.lsn() : "BAD " + r.lsn());
            }
        }
    }

    private static void print(String line) {
        synchronized (System.out) {
            System.out.println(line);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
