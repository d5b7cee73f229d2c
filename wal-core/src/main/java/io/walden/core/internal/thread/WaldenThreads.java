package io.walden.core.internal.thread;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one way Walden's modules make threads: daemon threads (a log's background work never keeps an application's JVM
 * alive; closing the log stops it), named {@code walden-<what>} so that a thread dump says whose each one is
 * (docs/glossary.md lists them). For wal-core, wal-replication and wal-server; applications need none of it.
 *
 * <p>Thread-safety: every method from any thread.
 */
public final class WaldenThreads {
    private WaldenThreads() {
    }

    /** A daemon thread named {@code name} that runs {@code task}; not started. */
    public static Thread daemon(Runnable task, String name) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        return t;
    }

    /** Daemon threads all named {@code name}: for an executor of one thread. */
    public static ThreadFactory named(String name) {
        return task -> daemon(task, name);
    }

    /** Daemon threads named {@code prefix-1}, {@code prefix-2}, ...: for a pool. */
    public static ThreadFactory numbered(String prefix) {
        AtomicInteger next = new AtomicInteger();
        return task -> daemon(task, prefix + "-" + next.incrementAndGet());
    }
}
