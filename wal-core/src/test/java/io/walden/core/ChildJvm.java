package io.walden.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A real child JVM running a main class from the test classpath, with the same JVM flags as the tests
 * (surefire passes them as {@code walden.test.jvmFlags}). Its stdout lines are collected as they arrive.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final CountDownLatch ready = new CountDownLatch(1);
    private final Thread pump;

    private ChildJvm(Process process) {
        this.process = process;
        this.pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    if (line.equals("READY")) {
                        ready.countDown();
                    } else {
                        lines.add(line);
                    }
                }
            } catch (IOException ignored) {
                // the child was killed mid-line: what was read so far is what it acknowledged
            }
        }, "child-stdout");
        pump.setDaemon(true);
        pump.start();
    }

    public static ChildJvm start(Class<?> main, Path stderr, String... args) throws IOException {
        List<String> flags = new ArrayList<>();
        for (String f : System.getProperty("walden.test.jvmFlags", "").trim().split("\\s+")) {
            if (!f.isEmpty()) {
                flags.add(f);
            }
        }
        return start(flags, main, stderr, args);
    }

    /** {@link #start(Class, Path, String...)} with these JVM flags instead of the tests' own. */
    public static ChildJvm start(List<String> flags, Class<?> main, Path stderr, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(flags);
        // The test JVM's temporary directory (the build's: walden.test.tmpFlag in the parent pom), one argument so that
        // a path with spaces stays one: a killed child leaves the native libraries it extracted there, not in /tmp.
        cmd.add("-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"));
        cmd.add("-Xmx256m");
        // Only the quick compiler (C1): a child lives for seconds, in which the optimising one mostly compiles start-up
        // code, a third of a start's CPU time, taken from the other tests on a machine of two cores.
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add(main.getName());
        cmd.addAll(Arrays.asList(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(stderr.toFile()));
        return new ChildJvm(pb.start());
    }

    /** Waits for the child to print READY. */
    public boolean awaitReady(long timeout, TimeUnit unit) throws InterruptedException {
        return ready.await(timeout, unit);
    }

    /** kill -9, then waits for the process and for its stdout to drain. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
        pump.join(TimeUnit.SECONDS.toMillis(10));
    }

    /** kill -9 at a random moment from {@code fromMillis} to {@code toMillis} from now. */
    public void killWithin(Random random, int fromMillis, int toMillis) throws InterruptedException {
        TestLogs.pauseRandomly(random, fromMillis, toMillis);
        kill();
    }

    /**
     * For a child's main: blocks until the parent kills it, so that it ends with no clean close and no shutdown
     * checkpoint.
     */
    public static void awaitKill() throws InterruptedException {
        new CountDownLatch(1).await(); // counted down by nobody: the kill ends the process here
    }

    public int waitFor(long timeout, TimeUnit unit) throws InterruptedException {
        if (!process.waitFor(timeout, unit)) {
            process.destroyForcibly();
            throw new AssertionError("child JVM did not exit within " + timeout + " " + unit);
        }
        pump.join(TimeUnit.SECONDS.toMillis(10));
        return process.exitValue();
    }

    public List<String> lines() {
        return lines;
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
