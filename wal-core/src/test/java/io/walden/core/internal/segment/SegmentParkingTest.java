package io.walden.core.internal.segment;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Parking and mapping again under contention: readers entering segments while a sweep parks them as fast as it can
 * ({@link OpenSegments} with a cap of one) always get the segment, mapped, never "removed"; a segment renamed out of the
 * log while readers map it again is gone for them, and its name is never recreated by a mapping.
 */
class SegmentParkingTest {
    private static final long SIZE = 64 << 10;
    private static final long LOG_ID = 42;
    @TempDir
    Path dir;

    private SegmentRegistry registryOf(int segments) throws Exception {
        SegmentRegistry registry = new SegmentRegistry(SIZE);
        for (int i = 0; i < segments; i++) {
            long start = i * SIZE;
            registry.add(Segment.map(SegmentFiles.prepare(dir, SIZE, start, LOG_ID, null), start, SIZE));
        }
        return registry;
    }

    /** A cap of one open segment over {@code registry}, whose every segment may be parked: the most parking there is. */
    private static OpenSegments parkingAll(SegmentRegistry registry) {
        OpenSegments files = new OpenSegments(1);
        files.register(registry, () -> Long.MAX_VALUE);
        return files;
    }

    /** Enters the segment starting at {@code start} and checks it is that segment's mapping; false when removed. */
    private static boolean readHeader(SegmentRegistry registry, long start) {
        Segment s = registry.enter(start + SegmentHeaderDescriptor.LENGTH);
        if (s == null) {
            return false;
        }
        try {
            assertThat(s.readLong(SegmentHeaderDescriptor.START_LSN_OFFSET)).isEqualTo(start);
            return true;
        } finally {
            s.exit();
        }
    }

    private void runAlongside(long millis, Runnable sweeper, Runnable... readers) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Runnable> all = new ArrayList<>(List.of(readers));
        all.add(sweeper);
        List<Thread> threads = all.stream().map(r -> new Thread(() -> {
            try {
                while (!stop.get()) {
                    r.run();
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        })).toList();
        threads.forEach(Thread::start);
        Thread.sleep(millis); // the contention runs this long
        stop.set(true);
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(10));
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void aReaderAlwaysEntersALiveSegmentWhileSweepsParkItAgainAndAgain() throws Exception {
        SegmentRegistry registry = registryOf(4);
        OpenSegments files = parkingAll(registry);
        AtomicLong entered = new AtomicLong();
        Runnable reader = () -> {
            long start = ThreadLocalRandom.current().nextInt(4) * SIZE;
            assertThat(readHeader(registry, start)).as("segment %s entered", start).isTrue();
            entered.incrementAndGet();
        };
        runAlongside(1500, files::sweep, reader, reader);
        assertThat(entered.get()).isGreaterThan(1000);
        assertThat(files.parked()).isGreaterThan(100);
        assertThat(registry.reopened()).isGreaterThan(100);
    }

    @Test
    void aSegmentRenamedOutOfTheLogIsNeverMappedBackUnderItsName() throws Exception {
        SegmentRegistry registry = registryOf(8);
        OpenSegments files = parkingAll(registry);
        AtomicLong next = new AtomicLong();
        Runnable remover = () -> {
            long start = next.getAndIncrement() * SIZE;
            Segment s = registry.get(start + SegmentHeaderDescriptor.LENGTH);
            if (s == null) {
                files.sweep();
                return;
            }
            try {
                Segment gone = registry.renameAndRemove(s, dir, dir.resolve(s.path().getFileName() + ".gone"));
                assertThat(gone).isNotNull();
                gone.markRemoved();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            files.sweep();
        };
        Runnable reader = () -> readHeader(registry, ThreadLocalRandom.current().nextInt(8) * SIZE);
        runAlongside(500, remover, reader, reader);
        try (Stream<Path> left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(SegmentFiles.SUFFIX)))
                    .as("no segment file recreated under a removed segment's name").isEmpty();
        }
    }
}
