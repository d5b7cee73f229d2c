package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads, mixed durability levels, random payload sizes, many segment rolls, readers tailing at
 * both visibilities: every returned LSN reads back with its payload, positions stay ordered, the flushed
 * position never passes what a completed force covered, async futures complete once and in LSN order.
 */
@Timeout(180)
class ConcurrentAppendTest {
    private static final int WRITERS = 8;
    private static final int PER_WRITER = 3000;
    private static final Durability[] LEVELS = Durability.values();

    @TempDir
    Path dir;

    static byte[] payload(int writer, int seq) {
        byte[] random = TestLogs.payload(writer, seq, 2000);
        return ByteBuffer.allocate(8 + random.length).order(ByteOrder.LITTLE_ENDIAN).putInt(writer).putInt(seq).put(random).array();
    }

    /**
     * @param walBuffers the ring's size: as large as a segment (every lap ends at a segment's end), or a quarter of
     *                   one (records run past the ring's end into its slack, and the ring fills between writes)
     */
    @ParameterizedTest(name = "segments of {0} bytes, WAL buffers of {1}")
    @CsvSource({"65536, 65536", "262144, 65536"})
    void shouldReadBackEveryAppendUnderConcurrencyAcrossManyRolls(long segmentSize, long walBuffers) throws Exception {
        FailingSync sync = new FailingSync();
        WalConfig config = WalConfig.builder(dir).segmentSize(segmentSize).walBuffers(walBuffers).syncStrategy(sync)
                .writerDelay(Duration.ofMillis(5)).build();
        Map<Long, byte[]> appended = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        try (Wal wal = Wal.open(config)) {
            long start = wal.insertLsn();
            Thread monitor = new Thread(() -> {
                while (!done.get()) {
                    long flushed = wal.flushedLsn();
                    long forced = sync.forcedUpTo.get();
                    long written = wal.writtenLsn();
                    long insert = wal.insertLsn();
                    if (flushed > Math.max(forced, start) || flushed > written || written > insert) {
                        errors.add(new AssertionError("positions out of order: flushed " + flushed + " forced "
                                + forced + " written " + written + " insert " + insert));
                    }
                }
            });
            List<Thread> threads = new ArrayList<>();
            List<TailingReader> readers = List.of(new TailingReader(wal, start, WalReader.Visibility.WRITTEN, done, errors),
                    new TailingReader(wal, start, WalReader.Visibility.FLUSHED, done, errors));
            readers.forEach(r -> threads.add(r.thread));
            CountDownLatch go = new CountDownLatch(1);
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                threads.add(new Thread(() -> {
                    try {
                        go.await();
                        for (int seq = 0; seq < PER_WRITER; seq++) {
                            byte[] p = payload(writer, seq);
                            Durability level = LEVELS[ThreadLocalRandom.current().nextInt(LEVELS.length)];
                            long lsn = wal.append(writer, p, level);
                            if (level != Durability.OFF && wal.flushedLsn() <= lsn) {
                                errors.add(new AssertionError(level + " append returned before its flush"));
                            }
                            if (appended.put(lsn, p) != null) {
                                errors.add(new AssertionError("LSN handed out twice: " + Lsn.format(lsn)));
                            }
                        }
                    } catch (Throwable t) {
                        errors.add(t);
                    }
                }, "writer-" + w));
            }
            monitor.start();
            threads.forEach(Thread::start);
            go.countDown();
            for (Thread t : threads.subList(readers.size(), threads.size())) {
                t.join();
            }
            wal.flush();
            for (TailingReader r : readers) {
                r.awaitPosition(wal.writtenLsn());
            }
            done.set(true);
            for (Thread t : threads) {
                t.join();
            }
            monitor.join();
            assertThat(errors).isEmpty();
            assertThat(appended).hasSize(WRITERS * PER_WRITER);
            assertThat(wal.status().segmentCount()).as("the test crossed many segments").isGreaterThan(20);
            for (TailingReader r : readers) {
                assertThat(r.seen).as(r.visibility + " reader saw every record").isEqualTo(appended.size());
            }
            try (WalReader r = wal.reader(start)) {
                int n = 0;
                for (WalRecord rec; (rec = r.next()) != null; n++) {
                    assertThat(rec.payload()).isEqualTo(appended.get(rec.lsn()));
                }
                assertThat(n).isEqualTo(appended.size());
            }
            assertThat(sync.forces.get()).as("group commit: far fewer forces than durable appends")
                    .isLessThan(WRITERS * PER_WRITER);
        }
    }

    @Test
    void shouldCompleteAsyncAppendsExactlyOnceInLsnOrder() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            List<Long> completions = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger completedTwice = new AtomicInteger();
            List<CompletableFuture<Void>> futures = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                CompletableFuture<Long> f = wal.appendAsync(payload(0, i), i % 3 == 0 ? Durability.ON : Durability.LOCAL);
                AtomicBoolean once = new AtomicBoolean();
                futures.add(f.thenAccept(lsn -> {
                    if (!once.compareAndSet(false, true)) {
                        completedTwice.incrementAndGet();
                    }
                    completions.add(lsn);
                }));
            }
            CompletableFuture.allOf(futures.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
            assertThat(completedTwice.get()).isZero();
            assertThat(completions).hasSize(20_000).isSorted();
        }
    }

    /** Tails the log at one visibility, checking every record against its deterministic payload. */
    private static final class TailingReader implements Runnable {
        final WalReader.Visibility visibility;
        final Thread thread;
        final Wal wal;
        final long start;
        final AtomicBoolean done;
        final List<Throwable> errors;
        volatile long position;
        volatile int seen;

        TailingReader(Wal wal, long start, WalReader.Visibility visibility, AtomicBoolean done, List<Throwable> errors) {
            this.wal = wal;
            this.start = start;
            this.visibility = visibility;
            this.done = done;
            this.errors = errors;
            this.position = start;
            this.thread = new Thread(this, "reader-" + visibility);
        }

        @Override
        public void run() {
            try (WalReader r = wal.reader(start, visibility)) {
                while (!done.get()) {
                    WalRecord rec = r.poll(10, TimeUnit.MILLISECONDS);
                    if (rec == null) {
                        continue;
                    }
                    if (visibility == WalReader.Visibility.FLUSHED && rec.lsn() >= wal.flushedLsn()) {
                        errors.add(new AssertionError("FLUSHED reader saw an unflushed record"));
                    }
                    ByteBuffer v = rec.payloadView();
                    int writer = v.getInt(0);
                    int seq = v.getInt(4);
                    if (!Arrays.equals(rec.payload(), payload(writer, seq)) || rec.type() != writer) {
                        errors.add(new AssertionError("reader saw a wrong payload at " + Lsn.format(rec.lsn())));
                    }
                    seen++;
                    position = rec.nextLsn();
                }
            } catch (Throwable t) {
                errors.add(t);
            }
        }

        void awaitPosition(long target) throws Exception {
            Eventually.holds(() -> position >= target || !thread.isAlive());
        }
    }
}
