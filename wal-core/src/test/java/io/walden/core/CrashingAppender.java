package io.walden.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Child-JVM main for the crash tests: several threads append LOCAL records forever and print
 * {@code A <thread> <seq> <lsn>} for each append only after it returned (so after it was forced).
 * The payload of (thread, seq) is {@link #payload}: the parent recomputes it to check the bytes.
 *
 * <p>Args: directory, threads, segment size[, sync method[, compression[, retention bytes]]]. With a compression other than none the
 * payloads are compressible text ({@link #payload(int, long, boolean)}).
 */
public final class CrashingAppender {
    private CrashingAppender() {
    }

    static byte[] payload(int thread, long seq) {
        return payload(thread, seq, false);
    }

    /** The seq (8 bytes, big-endian), then 300 random bytes, or text that compresses well. */
    static byte[] payload(int thread, long seq, boolean compressible) {
        byte[] rest = compressible
                ? ("{\"thread\":" + thread + ",\"seq\":" + seq + ",\"event\":\"appended\"} ").repeat(8)
                        .getBytes(StandardCharsets.UTF_8)
                : TestLogs.payload(thread, seq, 300);
        return ByteBuffer.allocate(8 + rest.length).putLong(seq).put(rest).array();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        long segmentSize = Long.parseLong(args[2]);
        SyncMethod method = args.length > 3 ? SyncMethod.parse(args[3]) : SyncMethod.FDATASYNC;
        Compression compression = args.length > 4 ? Compression.parse(args[4]) : Compression.NONE;
        boolean compressible = compression != Compression.NONE;
        long retentionBytes = args.length > 5 ? Long.parseLong(args[5]) : 0;
        Wal wal = Wal.open(WalConfig.builder(dir).segmentSize(segmentSize).syncMethod(method).compression(compression)
                .retentionBytes(retentionBytes).build());
        long startSeq = wal.insertLsn(); // distinct seqs per run: the LSN where this run started
        System.out.println("READY");
        System.out.flush();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int thread = t + 1;
            Thread w = new Thread(() -> {
                for (long seq = startSeq; ; seq++) {
                    long lsn = wal.append(thread, payload(thread, seq, compressible), Durability.LOCAL);
                    synchronized (System.out) {
                        System.out.println("A " + thread + " " + seq + " " + lsn);
                    }
                }
            }, "appender-" + thread);
            w.start();
            workers.add(w);
        }
        for (Thread w : workers) {
            w.join();
        }
    }
}
