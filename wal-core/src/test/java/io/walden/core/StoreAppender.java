package io.walden.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Child-JVM main for WalStoreCrashTest: appends LOCAL records to the logs of a store from several threads, each to a
 * random log, forever, and prints {@code A <log> <lsn> <seq>} for each append only after it returned (so after it was
 * forced). A record's payload is its log's name and its seq ({@link #payload}), so the parent can tell a record in the
 * wrong log, or a torn one.
 *
 * <p>Args: store directory, segment size, logs, threads.
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
        WalStore store = WalStore.open(WalStoreConfig.builder(dir).defaults(b -> b.segmentSize(segmentSize)).build());
        List<Wal> all = new ArrayList<>();
        for (int i = 0; i < logs; i++) {
            String name = "log-" + i;
            all.add(store.log(name).orElseGet(() -> store.create(name)));
        }
        long seqBase = System.nanoTime(); // distinct seqs per run
        System.out.println("READY");
        System.out.flush();
        for (int t = 0; t < threads; t++) {
            long start = seqBase + ((long) t << 40); // apart by far more than a run appends
            Thread w = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(start);
                for (long seq = start; ; seq++) {
                    int i = random.nextInt(all.size());
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
        Thread.currentThread().join(); // until killed
    }
}
