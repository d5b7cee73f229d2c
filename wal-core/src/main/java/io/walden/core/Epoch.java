package io.walden.core;

/**
 * One epoch of a log's history (PostgreSQL's timeline): the log's records from {@code startLsn} on were written
 * by the primary of epoch {@code number}, until the next epoch's start. Epoch 1 starts at LSN 0; a promotion
 * begins the next epoch at the promoted log's end.
 */
public record Epoch(int number, long startLsn) {
    public Epoch {
        if (number < 1) {
            throw new IllegalArgumentException("an epoch number is at least 1, not " + number);
        }
        if (startLsn < 0) {
            throw new IllegalArgumentException("an epoch's start LSN cannot be negative: " + startLsn);
        }
    }

    @Override
    public String toString() {
        return number + "@" + Lsn.format(startLsn);
    }
}
