package io.walden.core.internal.sync;

import io.walden.core.SyncMethod;

import java.io.IOException;

/**
 * Forces a byte range of one segment ({@link ForceTarget}) to stable storage. Called only by the flush leader, so at most one
 * force is in flight per log; an implementation need not be thread-safe beyond that, but it is called from
 * whichever thread leads.
 *
 * <p>Contract: return normally only when {@code [fromOffset, toOffset)} of the segment is durable. Throw
 * on any failure; the log then enters its failed state and never retries (see {@code docs/durability.md}).
 */
@FunctionalInterface
public interface SyncStrategy {

    void force(ForceTarget segment, long fromOffset, long toOffset) throws IOException;

    /** True when {@link #force} actually makes data durable (false only for {@link SyncMethod#NONE}). */
    default boolean durable() {
        return true;
    }

    /**
     * True when the files are written through a DSYNC channel, so that a write returns once its data is durable and
     * {@link #force} has nothing left to do ({@link SyncMethod#OPEN_DATASYNC}).
     */
    default boolean writesThrough() {
        return false;
    }

    /** The built-in strategy for a {@link SyncMethod}. */
    static SyncStrategy of(SyncMethod method) {
        switch (method) {
            case FDATASYNC:
                return named("fdatasync", (segment, from, to) -> segment.force(false));
            case FSYNC:
                return named("fsync", (segment, from, to) -> segment.force(true));
            case OPEN_DATASYNC:
                return new SyncStrategy() {
                    @Override
                    public void force(ForceTarget segment, long fromOffset, long toOffset) {
                        // nothing left: every write went through the segment's DSYNC channel (see writesThrough)
                    }

                    @Override
                    public boolean writesThrough() {
                        return true;
                    }

                    @Override
                    public String toString() {
                        return "open_datasync";
                    }
                };
            case NONE:
                return new SyncStrategy() {
                    @Override
                    public void force(ForceTarget segment, long fromOffset, long toOffset) {
                        // deliberately nothing: see SyncMethod.NONE
                    }

                    @Override
                    public boolean durable() {
                        return false;
                    }

                    @Override
                    public String toString() {
                        return "none";
                    }
                };
            default:
                throw new IllegalArgumentException("unknown sync method " + method);
        }
    }

    private static SyncStrategy named(String name, SyncStrategy body) {
        return new SyncStrategy() {
            @Override
            public void force(ForceTarget segment, long fromOffset, long toOffset) throws IOException {
                body.force(segment, fromOffset, toOffset);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
