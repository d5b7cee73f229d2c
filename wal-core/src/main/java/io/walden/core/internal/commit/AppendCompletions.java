package io.walden.core.internal.commit;

import io.walden.core.AppendCompletion;

/**
 * What the write path reaches of an {@link AppendCompletion}, which its public API hides from the applications that
 * extend it (the JDK's SharedSecrets pattern): {@code AppendCompletion} installs the access when its class is
 * initialised, which is before any instance reaches the write path.
 *
 * <p>Thread-safety: installed once, read by any thread (volatile).
 */
public final class AppendCompletions {
    /** The calls, implemented by AppendCompletion over its private and protected members. */
    public interface Access {
        /** The completion's own wait node, made with it ({@link AppendWait}). */
        AppendWait waitOf(AppendCompletion completion);

        /** The record at {@code lsn} reached the append's level. */
        void durable(AppendCompletion completion, long lsn);

        /** The level cannot be reached. */
        void failed(AppendCompletion completion, Throwable cause);
    }

    private static volatile Access access;

    private AppendCompletions() {
    }

    /** AppendCompletion's static initialiser, once. */
    public static void install(Access a) {
        access = a;
    }

    /** The wait node of {@code completion}: what the write path queues for it. */
    public static AppendWait waitOf(AppendCompletion completion) {
        return access.waitOf(completion);
    }

    static Access access() {
        return access;
    }
}
