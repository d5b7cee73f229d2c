package io.walden.server;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;

/**
 * What this build of Walden is and how long its process has run: the version comes from the Maven project's version
 * (filtered into {@code build.properties} at build time), never from the source, for {@code walden --version},
 * {@code /admin/status}, the status page and the {@code walden_build_info} gauge.
 */
public final class BuildInfo {
    private static final String VERSION = load();

    private BuildInfo() {
    }

    /** The project version this jar was built as ({@code 0.1.0-SNAPSHOT}), or "unknown" outside a Maven build. */
    public static String version() {
        return VERSION;
    }

    /** When this JVM started (the JVM's own clock, so that it counts start-up too). */
    public static Instant startedAt() {
        return Instant.ofEpochMilli(ManagementFactory.getRuntimeMXBean().getStartTime());
    }

    /** How long this JVM has run. */
    public static Duration uptime() {
        return Duration.ofMillis(ManagementFactory.getRuntimeMXBean().getUptime());
    }

    /**
     * {@code walden.build.info} (Prometheus {@code walden_build_info{version="..."}}), always 1: the usual way to join
     * a version to other series (a dashboard shows which instances run which build).
     */
    public static void bindTo(MeterRegistry registry) {
        Gauge.builder("walden.build.info", () -> 1).description("Always 1; the version tag says which build runs")
                .tag("version", VERSION).tag("java", System.getProperty("java.version")).register(registry);
    }

    private static String load() {
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            return v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            return "unknown";
        }
    }
}
