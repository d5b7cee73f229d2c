package io.walden.core.internal.metrics;

import io.walden.core.Durability;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters the append path bumps, kept per thread so that counting is a plain add to a line only
 * that thread writes: no atomic instruction, no allocation, no contention. Each thread's {@link Cell} is
 * written by its owner only (opaque stores, so readers never see a torn value) and summed at scrape time;
 * cells of threads that died are folded into a base so that thread churn does not grow the list.
 *
 * <p>Thread-safety: {@link #onAppend} only from the cell's owner; the sums from any thread.
 */
public final class WalStats {
    private static final int LEVELS = Durability.values().length;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final int BYTES = LEVELS;

    /** One thread's counters: appends per durability level, then payload bytes. */
    public static final class Cell {
        private final long[] counts = new long[LEVELS + 1];
        private final WeakReference<Thread> owner = new WeakReference<>(Thread.currentThread());
    }

    private final CopyOnWriteArrayList<Cell> cells = new CopyOnWriteArrayList<>();
    private final long[] ofEndedThreads = new long[LEVELS + 1];
    private final LongAdder rolls = new LongAdder();

    /** A cell for the calling thread; keep it (thread-locally) and pass it to {@link #onAppend}. */
    public Cell newCell() {
        Cell c = new Cell();
        cells.add(c);
        return c;
    }

    public static void onAppend(Cell cell, Durability durability, int payloadBytes) {
        long[] c = cell.counts;
        int i = durability.ordinal();
        LONGS.setOpaque(c, i, c[i] + 1);
        LONGS.setOpaque(c, BYTES, c[BYTES] + payloadBytes);
    }

    public void onRoll() {
        rolls.increment();
    }

    public long appends(Durability durability) {
        return sum(durability.ordinal());
    }

    public long appendBytes() {
        return sum(BYTES);
    }

    public long rolls() {
        return rolls.sum();
    }

    private synchronized long sum(int index) {
        long total = ofEndedThreads[index];
        for (Cell cell : cells) {
            Thread t = cell.owner.get();
            if (t == null || !t.isAlive()) {
                for (int i = 0; i < ofEndedThreads.length; i++) {
                    ofEndedThreads[i] += (long) LONGS.getOpaque(cell.counts, i);
                }
                cells.remove(cell);
                total += (long) LONGS.getOpaque(cell.counts, index);
            } else {
                total += (long) LONGS.getOpaque(cell.counts, index);
            }
        }
        return total;
    }
}
