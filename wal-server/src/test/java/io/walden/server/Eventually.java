package io.walden.server;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** Waiting, in the process tests, for a condition that other processes make true. */
final class Eventually {
    /** A condition read over HTTP or from files: it may throw while a server starts or stops. */
    interface Check {
        boolean holds() throws Exception;
    }

    private Eventually() {
    }

    /** Waits up to 30 s for {@code check} to hold, re-checking every 50 ms; fails the test otherwise. */
    static void waitUntil(Check check) throws Exception {
        waitUntil(30, check);
    }

    static void waitUntil(int seconds, Check check) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (check.holds()) {
                    return;
                }
            } catch (IOException e) {
                last = e; // a server between two lives: try again
            }
            Thread.sleep(50);
        }
        throw new AssertionError("condition not reached in " + seconds + " s", last);
    }
}
