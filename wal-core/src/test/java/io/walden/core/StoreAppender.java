package io.walden.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Child-JVM main for WalStoreCrashTest: appends LOCAL records to the logs of a store from several threads, each to a
 * random log, forever, and prints {@code A <log> <lsn> <seq>} for each append only after it returned (so after it was
 * forced). A record's payload is its log's name and its seq ({@link #payload}), so the parent can tell a record in the
 * wrong log, or a torn one.
 *
 * <p>With a cap on open segment files and readers, each reader reads every log from its oldest record to its end, again
 * and again, checking each record's payload (a record of another log, or torn, prints {@code BAD ...}), so that sealed
 * segments are parked and mapped again under the appends; the child prints {@code PARKED <n>} as the store parks them.
 *
 * <p>With a budget of WAL buffers smaller than the logs' rings together, the logs take turns holding them; the child
 * prints {@code GIVEN_BACK <n>} as quiet logs give theirs back to the ones that append.
 *
 * <p>With phases, the appenders write to the first half of the logs for a phase, then to the second half, and so on,
 * so that each half goes idle in turn (and gives back its WAL buffers and every segment file, the one it writes into
 * included) and then appends again; the child prints {@code PHASE <n>} as each begins, and {@code HELD <bytes>} as the
 * WAL buffers its logs hold change.
 *
 * <p>Args: store directory, segment size, logs, threads[, max open files, readers[, WAL buffers budget[, phase
 * millis[, idle millis (the logs' idle period, {@link WalConfig.Builder#idleAfter})]]]].
 */
public final class StoreAppender {
    private StoreAppender() {
    }

    static byte[] payload(String log, long seq) {
        byte[] name = log.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + name.length + 64).putLong(seq).put(name).put(TestLogs.payload(name.length, seq, 64))
                .array();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        long segmentSize = Long.parseLong(args[1]);
        int logs = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        int maxOpenFiles = args.length > 4 ? Integer.parseInt(args[4]) : WalStoreConfig.builder(dir).build().maxOpenFiles();
        int readers = args.length > 5 ? Integer.parseInt(args[5]) : 0;
        long walBuffers = args.length > 6 ? Long.parseLong(args[6]) : WalStoreConfig.DEFAULT_WAL_BUFFERS;
        long phaseNanos = args.length > 7 ? Long.parseLong(args[7]) * 1_000_000 : 0;
        Duration idle = args.length > 8 ? Duration.ofMillis(Long.parseLong(args[8])) : WalConfig.DEFAULT_IDLE_AFTER;
        WalStore store = WalStore.open(WalStoreConfig.builder(dir).maxOpenFiles(maxOpenFiles).walBuffers(walBuffers)
                .defaults(b -> b.segmentSize(segmentSize).checkpointInterval(Duration.ofMillis(50)).idleAfter(idle))
                .build());
        List<Wal> all = new ArrayList<>();
        for (int i = 0; i < logs; i++) {
            String name = "log-" + i;
            all.add(store.log(name).orElseGet(() -> store.create(name)));
        }
        long seqBase = System.nanoTime(); // distinct seqs per run
        long t0 = System.nanoTime();
        System.out.println("READY");
        System.out.flush();
        for (int t = 0; t < threads; t++) {
            long start = seqBase + ((long) t << 40); // apart by far more than a run appends
            Thread w = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(start);
                for (long seq = start; ; seq++) {
                    int i;
                    if (phaseNanos > 0) {
                        int half = all.size() / 2;
                        i = (int) ((System.nanoTime() - t0) / phaseNanos % 2) * half + random.nextInt(half);
                    } else {
                        i = random.nextInt(all.size());
                    }
                    String name = "log-" + i;
                    long lsn = all.get(i).append(payload(name, seq), Durability.LOCAL);
                    synchronized (System.out) {
                        System.out.println("A " + name + " " + lsn + " " + seq);
                    }
                }
            }, "appender-" + t);
            w.setDaemon(true);
            w.start();
        }
        for (int r = 0; r < readers; r++) {
            Thread reader = new Thread(() -> readForever(all), "reader-" + r);
            reader.setDaemon(true);
            reader.start();
        }
        long[] last = {0, 0, 0, 0}; // phase, parked, held, given back
        for (; ; Thread.sleep(100)) { // until killed
            reportChange("PHASE", 0, phaseNanos > 0 ? (System.nanoTime() - t0) / phaseNanos : 0, last);
            reportChange("PARKED", 1, store.parkedSegments(), last);
            if (phaseNanos > 0) {
                reportChange("HELD", 2, store.walBuffersHeld(), last);
            }
            reportChange("GIVEN_BACK", 3, store.walBuffersGivenBack(), last);
        }
    }

    /** Prints {@code <what> <now>} when {@code now} differs from {@code last[i]} (what was printed last). */
    private static void reportChange(String what, int i, long now, long[] last) {
        if (now != last[i]) {
            last[i] = now;
            synchronized (System.out) {
                System.out.println(what + " " + now);
            }
        }
    }

    private static void readForever(List<Wal> all) {
        while (true) {
            for (int i = 0; i < all.size(); i++) {
                String name = "log-" + i;
                try (WalReader r = all.get(i).reader(all.get(i).oldestLsn())) {
                    for (WalRecord rec; (rec = r.next()) != null; ) {
                        long seq = rec.payloadView().order(ByteOrder.BIG_ENDIAN).getLong(0);
                        if (!Arrays.equals(rec.payload(), payload(name, seq))) {
                            synchronized (System.out) {
                                System.out.println("BAD " + name + " " + Lsn.format(rec.lsn()));
                            }
                        }
                    }
                } catch (RuntimeException e) {
                    synchronized (System.out) {
                        System.out.println("BAD " + name + " " + e);
                    }
                }
            }
        }
    }
}
