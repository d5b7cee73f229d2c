package io.walden.replication.primary;

import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.internal.thread.WaldenThreads;
import io.walden.replication.policy.SyncPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Replication slots, by replica name: the flushed position each replica confirmed, kept while it is away so that
 * truncation does not remove what it will ask for (PostgreSQL's physical slots), up to a cap. Saved in walden.slots
 * ({@link SlotFile}) at most a second after a change and at close, by a thread of its own, since a save forces files.
 *
 * <p>Thread-safety: every method from any thread.
 */
final class SlotStore {
    private static final Logger LOG = LoggerFactory.getLogger(SlotStore.class);

    private final Wal wal;
    private final long maxRetainedBytes;
    private final Map<String, Long> slots = new ConcurrentHashMap<>();
    /** Set when slots changed since they were last saved. */
    private final AtomicBoolean changed = new AtomicBoolean();
    private final ExecutorService writer = Executors.newSingleThreadExecutor(WaldenThreads.named("walden-slot-writer"));

    /** Takes the saved slots back, except those that can no longer be served or that this log never reached. */
    SlotStore(Wal wal, long maxRetainedBytes) {
        this.wal = wal;
        this.maxRetainedBytes = maxRetainedBytes;
        SlotFile.read(wal.directory()).forEach((name, lsn) -> {
            if (!SyncPolicy.isValidName(name) || lsn < wal.oldestLsn() || lsn > wal.flushedLsn()) {
                LOG.warn("Dropping the saved replication slot of '{}' at {}: the log now holds {} to {}", name,
                        Lsn.format(lsn), Lsn.format(wal.oldestLsn()), Lsn.format(wal.flushedLsn()));
                changed.set(true);
            } else {
                slots.put(name, lsn);
            }
        });
        if (!slots.isEmpty()) {
            LOG.info("Replication slots kept from before: {}", slots);
        }
    }

    /** The oldest LSN a slot still needs (slots further behind than the cap are dropped first); MAX_VALUE for none. */
    long retentionFloor() {
        long insert = wal.insertLsn();
        long floor = Long.MAX_VALUE;
        for (Map.Entry<String, Long> slot : slots.entrySet()) {
            if (insert - slot.getValue() > maxRetainedBytes) {
                if (slots.remove(slot.getKey(), slot.getValue())) {
                    changed.set(true);
                    LOG.warn("Dropping the replication slot of '{}': it holds back {} bytes, more than the {} allowed; that "
                            + "replica will have to be rebuilt", slot.getKey(), insert - slot.getValue(), maxRetainedBytes);
                }
                continue;
            }
            floor = Math.min(floor, slot.getValue());
        }
        return floor;
    }

    /** A replica connected at {@code start}: its slot holds that until it confirms more. */
    void connected(String name, long start) {
        slots.merge(name, start, Math::min);
        changed.set(true);
    }

    /** A replica confirmed it flushed everything below {@code flushed}: its slot moves forward (never back). */
    void confirmed(String name, long flushed) {
        Long slot = slots.get(name);
        if (slot == null || flushed > slot) {
            slots.merge(name, flushed, Math::max);
            changed.set(true);
        }
    }

    boolean has(String name) {
        return slots.containsKey(name);
    }

    int size() {
        return slots.size();
    }

    /** @return false when there was no such slot */
    boolean drop(String name) {
        boolean dropped = slots.remove(name) != null;
        if (dropped) {
            changed.set(true);
        }
        return dropped;
    }

    Map<String, Long> snapshot() {
        return Map.copyOf(slots);
    }

    /** Saves the slots, if they changed, on the writer thread; nothing once closed (the close saved them). */
    void saveSoon() {
        try {
            writer.execute(this::save);
        } catch (RejectedExecutionException e) {
            // A tick already running on a shared event loop when the endpoint closed: close() saved the last positions.
        }
    }

    private void save() {
        if (!changed.getAndSet(false)) {
            return;
        }
        try {
            SlotFile.write(wal.directory(), slots);
        } catch (IOException | RuntimeException e) {
            changed.set(true); // retried at the next tick
            LOG.warn("Cannot save the replication slots in {}: {}", wal.directory(), e.toString());
        }
    }

    /** The endpoint never started: stops the writer, saving nothing. */
    void abandon() {
        writer.shutdown();
    }

    /** Saves the last positions (after every status was taken) and stops the writer. */
    void close() {
        writer.execute(this::save);
        writer.shutdown();
        try {
            writer.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
