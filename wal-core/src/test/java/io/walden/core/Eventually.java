package io.walden.core;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Waiting, in tests, for a condition that other threads or processes make true: the one way the tests of every module
 * wait (wal-core's test jar), never a fixed sleep, which is too short on a slow minute and wasted on a fast one.
 */
public final class Eventually {
    /** How long {@link #waitUntil(Check)} waits: far beyond any condition's normal time, so only a real failure fails. */
    public static final int DEFAULT_SECONDS = 30;
    /** The longest pause between two checks: a check may be an HTTP request or a file read. */
    private static final long MAX_PAUSE_MILLIS = 50;

    /** A condition; it may throw an {@link IOException} while a server starts or stops (it is checked again). */
    @FunctionalInterface
    public interface Check {
        boolean holds() throws Exception;
    }

    private Eventually() {
    }

    /** Waits up to {@link #DEFAULT_SECONDS} for {@code check} to hold; fails the test otherwise. */
    public static void waitUntil(Check check) throws Exception {
        waitUntil(DEFAULT_SECONDS, check);
    }

    /** As {@link #waitUntil(Check)}, the failure naming {@code what} was awaited. */
    public static void waitUntil(String what, Check check) throws Exception {
        if (!holdsWithin(DEFAULT_SECONDS, check)) {
            throw new AssertionError("not reached in " + DEFAULT_SECONDS + " s: " + what);
        }
    }

    /** Waits up to {@code seconds} for {@code check} to hold; fails the test otherwise. */
    public static void waitUntil(int seconds, Check check) throws Exception {
        IOException[] last = new IOException[1];
        if (!holdsWithin(seconds, check, last)) {
            throw new AssertionError("condition not reached in " + seconds + " s", last[0]);
        }
    }

    /** Whether {@code check} holds within {@link #DEFAULT_SECONDS}, for a test that says itself what it waited for. */
    public static boolean holds(Check check) throws Exception {
        return holdsWithin(DEFAULT_SECONDS, check);
    }

    /** Whether {@code check} holds within {@code seconds}, for a test that says itself what it waited for. */
    public static boolean holdsWithin(int seconds, Check check) throws Exception {
        return holdsWithin(seconds, check, new IOException[1]);
    }

    /**
     * Checks, again and again for {@code millis}, that {@code check} still holds; fails the test the first time it does
     * not. What a test that proves something does NOT happen uses: a window is the only way to see an absence, and a
     * check throughout it also catches what comes and goes within it.
     */
    public static void holdsThroughout(String what, long millis, Check check) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (long pause = 1; ; pause = pause(pause)) {
            if (!check.holds()) {
                throw new AssertionError("no longer holds: " + what);
            }
            if (System.nanoTime() - deadline > 0) {
                return;
            }
        }
    }

    private static boolean holdsWithin(int seconds, Check check, IOException[] last) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (long pause = 1; ; pause = pause(pause)) {
            try {
                if (check.holds()) {
                    return true;
                }
            } catch (IOException e) {
                last[0] = e; // a server between two lives: try again
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
        }
    }

    /**
     * The one pause of the waits, between two checks: short at first (most conditions come soon), then longer so that a
     * slow one does not take the cores from what it waits for. Returns the next pause.
     */
    private static long pause(long millis) throws InterruptedException {
        Thread.sleep(millis);
        return Math.min(MAX_PAUSE_MILLIS, millis * 2);
    }
}
