package io.walden.core;

import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Asynchronous appends without futures (what an event loop uses): each completion is told exactly once, in LSN
 * order, on the thread that made its level hold, and can be reused right after.
 */
@Timeout(60)
class AppendCompletionTest {
    @TempDir
    Path dir;

    /** Records what it was told and on which thread. */
    private static class Recording extends AppendCompletion {
        final List<Long> durable = Collections.synchronizedList(new ArrayList<>());
        final List<Throwable> failed = Collections.synchronizedList(new ArrayList<>());
        volatile Thread toldOn;
        final CountDownLatch told;

        Recording(int expected) {
            this.told = new CountDownLatch(expected);
        }

        @Override
        protected void durable(long lsn) {
            toldOn = Thread.currentThread();
            durable.add(lsn);
            told.countDown();
        }

        @Override
        protected void failed(Throwable cause) {
            toldOn = Thread.currentThread();
            failed.add(cause);
            told.countDown();
        }
    }

    private static ByteBuffer payload(String s) {
        return ByteBuffer.wrap(TestLogs.bytes(s));
    }

    @Test
    void shouldTellAnOffAppendBeforeTryAppendReturns() {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            Recording c = new Recording(1);
            assertThat(wal.nonWaiting().tryAppend(0, payload("off"), Durability.OFF, c)).isTrue();
            assertThat(c.durable).hasSize(1);
            assertThat(c.toldOn).isSameAs(Thread.currentThread());
        }
    }

    @Test
    void shouldLeadTheFlushOnTheCallingThreadWhenNoFlushIsInProgress() {
        try (Wal wal = Wal.open(TestLogs.small(dir).writerDelay(Duration.ofHours(1)).build())) {
            Recording c = new Recording(1);
            wal.nonWaiting().tryAppend(0, payload("lone"), Durability.LOCAL, c);
            assertThat(c.durable).as("nothing flushes because of tryAppend alone").isEmpty();
            assertThat(wal.nonWaiting().flushIfIdle()).isTrue();
            assertThat(c.durable).as("told before flushIfIdle returned").hasSize(1);
            assertThat(c.toldOn).isSameAs(Thread.currentThread());
            assertThat(wal.flushedLsn()).isGreaterThan(c.durable.get(0));
        }
    }

    @Test
    void shouldTellEveryAppendOnceInLsnOrderWhenTheBackgroundWriterFlushes() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            int n = 5_000;
            Recording c = new Recording(n);
            List<Recording> singles = new ArrayList<>();
            List<Long> order = Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < n; i++) {
                Recording one = new Recording(1) {
                    @Override
                    protected void durable(long lsn) {
                        order.add(lsn);
                        super.durable(lsn);
                    }
                };
                singles.add(one);
                int record = i;
                Eventually.waitUntil(() -> {
                    if (wal.nonWaiting().tryAppend(0, payload("r" + record), record % 2 == 0 ? Durability.LOCAL : Durability.ON, one)) {
                        return true;
                    }
                    wal.nonWaiting().requestFlush(); // the next segment is not prepared yet, or the WAL buffers wait to be written
                    return false;
                });
                if (i % 100 == 99) {
                    wal.nonWaiting().requestFlush();
                }
            }
            wal.nonWaiting().requestFlush();
            for (Recording one : singles) {
                assertThat(one.told.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(one.durable).hasSize(1);
                assertThat(one.failed).isEmpty();
            }
            assertThat(order).hasSize(n).isSorted();
        }
    }

    @Test
    void shouldWaitForTheReplicasWhenAPolicyIsSetThenTellTheSameCompletionOnce() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            wal.replication().remoteWaits().activate(); // a policy stands: ON waits for its confirmation after the local flush
            Recording c = new Recording(1);
            wal.nonWaiting().tryAppend(0, payload("replicated"), Durability.ON, c);
            wal.nonWaiting().flushIfIdle();
            long lsn = wal.insertLsn();
            Eventually.waitUntil(() -> wal.flushedLsn() >= lsn);
            assertThat(c.told.await(100, TimeUnit.MILLISECONDS)).as("flushed locally, not confirmed yet").isFalse();
            assertThat(c.durable).isEmpty();
            wal.replication().remoteWaits().advance(Durability.ON, lsn);
            assertThat(c.told.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(c.durable).hasSize(1);
            wal.replication().remoteWaits().deactivate();
        }
    }

    @Test
    void shouldFailTheCompletionsOfAFailedLogAndRefuseLaterAppends() throws Exception {
        FailingSync sync = new FailingSync();
        try (Wal wal = Wal.open(TestLogs.small(dir).syncStrategy(sync).writerDelay(Duration.ofHours(1)).build())) {
            sync.failing = true;
            Recording c = new Recording(1);
            wal.nonWaiting().tryAppend(0, payload("doomed"), Durability.LOCAL, c);
            wal.nonWaiting().flushIfIdle();
            assertThat(c.told.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(c.durable).isEmpty();
            assertThat(c.failed).singleElement().isInstanceOf(WalFailedException.class);
            Assertions.assertThatThrownBy(() -> wal.nonWaiting().tryAppend(0, payload("later"), Durability.LOCAL, new Recording(1)))
                    .isInstanceOf(WalFailedException.class);
        }
    }

    @Test
    void shouldKeepTellingTheOthersWhenOneCompletionThrows() throws Exception {
        try (Wal wal = Wal.open(TestLogs.small(dir).build())) {
            AppendCompletion throwing = new AppendCompletion() {
                @Override
                protected void durable(long lsn) {
                    throw new IllegalStateException("a careless callback");
                }

                @Override
                protected void failed(Throwable cause) {
                }
            };
            Recording after = new Recording(1);
            wal.nonWaiting().tryAppend(0, payload("first"), Durability.LOCAL, throwing);
            wal.nonWaiting().tryAppend(0, payload("second"), Durability.LOCAL, after);
            wal.nonWaiting().requestFlush();
            assertThat(after.told.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(after.durable).hasSize(1);
        }
    }
}
