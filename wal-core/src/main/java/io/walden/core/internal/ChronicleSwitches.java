package io.walden.core.internal;

/**
 * Chronicle's process-wide switches, set before any Chronicle class loads: no usage analytics sent
 * anywhere (a storage library must not phone home), no start-up announcements on stdout. A user who
 * sets these properties explicitly keeps their value.
 */
public final class ChronicleSwitches {
    private ChronicleSwitches() {
    }

    public static void apply() {
        setIfAbsent("chronicle.analytics.disable", "true");
        setIfAbsent("chronicle.announcer.disable", "true");
        setIfAbsent("chronicle.disk.monitor.disable", "true");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }
}
