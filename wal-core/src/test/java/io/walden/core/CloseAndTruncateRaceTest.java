package io.walden.core;

import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * close() and truncateBefore() racing appenders, committers and readers on small segments: nothing hangs,
 * nothing touches an unmapped segment (which would crash the JVM), every append either returns an LSN that
 * reads back after reopening or fails with WalClosedException.
 */
@Timeout(120)
class CloseAndTruncateRaceTest {
    @TempDir
    Path dir;

    @RepeatedTest(5)
    void shouldCloseCleanlyWhileAppendsTruncationsAndReadsRace() throws Exception {
        Map<Long, Integer> acknowledged = new ConcurrentHashMap<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Wal wal = Wal.open(TestLogs.small(dir).spareSegments(1).build());
        CountDownLatch started = new CountDownLatch(6);
        Thread[] threads = new Thread[6];
        for (int t = 0; t < 4; t++) {
            int writer = t;
            threads[t] = new Thread(() -> {
                started.countDown();
                for (int i = 0; !stop.get(); i++) {
                    try {
                        Durability level = i % 3 == 0 ? Durability.LOCAL : Durability.OFF;
                        long lsn = wal.append(writer, new byte[ThreadLocalRandom.current().nextInt(1, 3000)], level);
                        acknowledged.put(lsn, writer);
                    } catch (WalClosedException e) {
                        return;
                    } catch (Throwable e) {
                        errors.add(e);
                        return;
                    }
                }
            });
        }
        threads[4] = new Thread(() -> { // truncates right behind the flushed position, so segments are retired constantly
            started.countDown();
            while (!stop.get()) {
                try {
                    wal.truncateBefore(wal.flushedLsn());
                } catch (WalClosedException e) {
                    return;
                } catch (Throwable e) {
                    errors.add(e);
                    return;
                }
            }
        });
        threads[5] = new Thread(() -> { // a reader chasing the tail, falling behind truncation now and then
            started.countDown();
            while (!stop.get()) {
                try (WalReader r = wal.reader(wal.oldestLsn(), WalReader.Visibility.WRITTEN)) {
                    for (int n = 0; n < 200 && r.next() != null; n++) {
                        Thread.onSpinWait();
                    }
                } catch (WalClosedException | LsnRemovedException e) {
                    // the log closed, or truncation overtook the reader: both are answers, not failures
                } catch (Throwable e) {
                    errors.add(e);
                    return;
                }
            }
        });
        for (Thread t : threads) {
            t.start();
        }
        started.await();
        TestLogs.pauseRandomly(ThreadLocalRandom.current(), 100, 400); // the close lands at a random point of the race
        wal.close();
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        assertThat(errors).isEmpty();
        assertThat(acknowledged).isNotEmpty();
        try (Wal reopened = Wal.open(TestLogs.small(dir).build())) {
            assertThat(reopened.status().recoveryReport().bytesCutOff()).as("close() flushed everything: a clean end").isZero();
            long oldest = reopened.oldestLsn();
            try (WalReader r = reopened.reader(oldest)) {
                int found = 0;
                for (WalRecord rec; (rec = r.next()) != null; ) {
                    Integer writer = acknowledged.get(rec.lsn());
                    if (writer != null) {
                        assertThat(rec.type()).isEqualTo(writer);
                        found++;
                    }
                }
                long expected = acknowledged.keySet().stream().filter(l -> l >= oldest).count();
                assertThat(found).as("every acknowledged record that was not truncated").isEqualTo(expected);
            }
        }
    }
}
