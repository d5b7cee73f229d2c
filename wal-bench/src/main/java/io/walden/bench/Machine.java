package io.walden.bench;

import com.sun.management.OperatingSystemMXBean;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.LinkedHashMap;
import java.util.Map;

/** What a benchmark run was measured on: CPU, memory, OS, JVM, the file system of the data directory. */
final class Machine {
    private Machine() {
    }

    static Map<String, Object> describe(Path dir) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("date", ZonedDateTime.now(ZoneOffset.UTC).toString());
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        m.put("cpuModel", firstLine(Path.of("/proc/cpuinfo"), "model name"));
        m.put("memoryGiB", Math.round(((OperatingSystemMXBean) ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize() / (1024.0 * 1024 * 1024)));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("fileStore", Files.getFileStore(dir).type() + " (" + Files.getFileStore(dir).name() + ")");
        return m;
    }

    private static String firstLine(Path file, String key) {
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith(key)) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            return "unknown";
        }
        return "unknown";
    }
}
