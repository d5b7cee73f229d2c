package io.walden.core;

import net.openhft.chronicle.core.OS;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What this process holds, measured for real, for leak tests: its live threads (by name), its open descriptors (what each
 * one points at, from {@code /proc/self/fd}), its mappings of files under a directory ({@code /proc/self/maps}), the JDK's
 * direct buffers ({@code BufferPoolMXBean} "direct") and Chronicle's native memory ({@code OS.memory().nativeMemoryUsed()},
 * which counts every allocation Chronicle makes and every free: the WAL buffers are such an allocation).
 *
 * <p>{@link #beyond} says what one holds that another did not, naming the thread, file or bytes: what a leak test
 * asserts is empty. Linux only ({@code /proc}).
 *
 * @param threads     the names of the live threads, sorted
 * @param descriptors what each open descriptor points at (a path, {@code socket:[...]}, {@code pipe:[...]}), sorted
 * @param mappings    the mapped files under the directory measured, one per mapping, sorted
 * @param directBytes bytes of the JDK's direct buffers
 * @param nativeBytes bytes Chronicle allocated and has not freed
 */
record ProcessFootprint(List<String> threads, List<String> descriptors, List<String> mappings, long directBytes,
                        long nativeBytes) {

    /** Measures the process now; {@code mappings} are those of files under {@code dir}. */
    static ProcessFootprint of(Path dir) {
        try {
            return new ProcessFootprint(liveThreads(), openDescriptors(), mappingsUnder(dir.toRealPath().toString()), directBufferBytes(),
                    OS.memory().nativeMemoryUsed());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * What this footprint holds beyond {@code base}: each thread, descriptor and mapping more ({@code "+ thread
     * walden-writers-1"}), and the bytes of direct and native memory more; empty when it holds nothing {@code base} did
     * not. (What it holds less of is no leak: something the base measure caught in passing, since gone.)
     */
    /**
     * Direct bytes more than the base that are not a leak: the JDK's temporary direct buffers, which a thread that wrote
     * a heap buffer to a file keeps cached until it ends (sun.nio.ch.Util; 511 B seen on the test's own thread after a
     * store with a journal closed). A leak of anything per log, times a hundred logs and three rounds, is far above it.
     */
    private static final long JDK_TEMPORARY_BUFFERS = 16 << 10;

    List<String> beyond(ProcessFootprint base) {
        List<String> out = new ArrayList<>();
        more("thread", threads, base.threads, out);
        more("descriptor", descriptors, base.descriptors, out);
        more("mapping", mappings, base.mappings, out);
        if (directBytes > base.directBytes + JDK_TEMPORARY_BUFFERS) {
            out.add("+ " + (directBytes - base.directBytes) + " bytes of direct buffers");
        }
        if (nativeBytes > base.nativeBytes) {
            out.add("+ " + (nativeBytes - base.nativeBytes) + " bytes of Chronicle's native memory");
        }
        return out;
    }

    private static void more(String what, List<String> now, List<String> base, List<String> out) {
        List<String> added = new ArrayList<>(now);
        base.forEach(added::remove);
        added.forEach(a -> out.add("+ " + what + " " + a));
    }

    /** The descriptors that point at a file under {@code dir}. */
    List<String> descriptorsUnder(Path dir) {
        String prefix = realPath(dir);
        return descriptors.stream().filter(d -> d.startsWith(prefix)).toList();
    }

    /** The live threads whose name begins with {@code prefix}. */
    List<String> threadsNamed(String prefix) {
        return threads.stream().filter(t -> t.startsWith(prefix)).toList();
    }

    private static List<String> liveThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName).sorted().toList();
    }

    private static List<String> openDescriptors() throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    out.add(Files.readSymbolicLink(fd).toString());
                } catch (IOException closedMeanwhile) {
                    // the listing's own descriptor, or one closed since the listing: not held
                }
            }
        }
        out.remove("/proc/" + ProcessHandle.current().pid() + "/fd"); // the listing's own, when the link still resolved
        out.sort(Comparator.naturalOrder());
        return out;
    }

    private static List<String> mappingsUnder(String dir) throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            int path = line.indexOf('/');
            if (path >= 0 && line.startsWith(dir, path)) {
                out.add(line.substring(path));
            }
        }
        out.sort(Comparator.naturalOrder());
        return out;
    }

    private static long directBufferBytes() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(p -> p.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
    }

    private static String realPath(Path dir) {
        try {
            return dir.toRealPath().toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
