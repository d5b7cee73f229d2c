package io.walden.core.internal;

import io.walden.core.AppendCompletion;
import io.walden.core.Durability;
import io.walden.core.replication.RemoteWaits;

/**
 * What the write path calls on an {@link AppendCompletion}, which its public API hides from the applications that
 * extend it (the JDK's SharedSecrets pattern): {@code AppendCompletion} installs the access when its class is
 * initialised, which is before any instance reaches the write path.
 *
 * <p>Thread-safety: installed once, read by any thread (volatile).
 */
public final class AppendCompletions {
    /** The calls, implemented by AppendCompletion over its package-private methods. */
    public interface Access {
        /** Before the completion is queued for a record at {@code level} (its timeout counted from {@code since}). */
        void prepare(AppendCompletion completion, Durability level, RemoteWaits remote, long since);

        /** The record at {@code lsn} reached the level. */
        void durable(AppendCompletion completion, long lsn);
    }

    private static volatile Access access;

    private AppendCompletions() {
    }

    /** AppendCompletion's static initialiser, once. */
    public static void install(Access a) {
        access = a;
    }

    static Access access() {
        return access;
    }
}
