package io.walden.server.http;

import io.netty.util.ResourceLeakDetector;

import java.util.function.UnaryOperator;

/**
 * Netty's buffer leak detector in a running sidecar: off, unless the operator names a level.
 *
 * <p><b>Why off.</b> At Netty's default level ({@code simple}) one pooled buffer in 128 records the stack that
 * allocated it ({@code Throwable.fillInStackTrace}): 0.67 µs of the server's 27.7 µs of CPU per {@code local} append
 * over HTTP here, 0.21 of 12.3 µs per {@code GET /health} (perf, 16 connections, docs/benchmarks.md, issue #39). A
 * leak it finds is a bug of ours, which the test suite is there to find: the tests keep Netty's default, as they run
 * the server in their own JVMs without {@link #applyForServe}.
 *
 * <p>{@code -Dio.netty.leakDetection.level=simple} (or {@code advanced}, {@code paranoid}) in {@code JAVA_OPTS} turns
 * it back on, for a process suspected of leaking (docs/operations.md).
 */
public final class LeakDetection {
    /** Netty's property for the level, and the name it read before 4.1 (it still honours both). */
    static final String LEVEL_PROPERTY = "io.netty.leakDetection.level";
    static final String LEGACY_LEVEL_PROPERTY = "io.netty.leakDetectionLevel";

    private LeakDetection() {
    }

    /** Turns the detector off for this process unless a level was given; called once, by {@code walden serve}. */
    public static void applyForServe() {
        ResourceLeakDetector.Level level = levelForServe(System::getProperty);
        if (level != null) {
            ResourceLeakDetector.setLevel(level);
        }
    }

    /** The level {@code walden serve} sets, given the process's properties: null leaves Netty's reading of them. */
    static ResourceLeakDetector.Level levelForServe(UnaryOperator<String> properties) {
        if (properties.apply(LEVEL_PROPERTY) != null || properties.apply(LEGACY_LEVEL_PROPERTY) != null) {
            return null;
        }
        return ResourceLeakDetector.Level.DISABLED;
    }
}
