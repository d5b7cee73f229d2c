package io.walden.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs the real {@code walden.jar} (built by the package phase) in a child JVM, as a user would. */
final class WaldenJar {
    record Run(int exitCode, String stdout, String stderr, byte[] stdoutBytes) {
    }

    private WaldenJar() {
    }

    /**
     * A user's mistake: one line naming it, on standard error (beside the log lines of a server that opened its log),
     * status 2, no stack trace, no Java class.
     *
     * @return the line
     */
    static String assertOneLineUserError(Run run, String mentions) {
        assertThat(run.exitCode()).as(run.stdout() + run.stderr()).isEqualTo(2);
        List<String> lines = run.stderr().lines().filter(l -> !l.contains(" INFO ") && !l.contains(" WARN ")).toList();
        assertThat(lines).as(run.stderr()).hasSize(1);
        assertThat(lines.get(0)).contains(mentions).doesNotContain("Exception").doesNotContain("java.");
        assertThat(run.stderr()).doesNotContain("\tat ");
        return lines.get(0);
    }

    static Path jar() {
        Path jar = Path.of(System.getProperty("walden.jar", "target/walden.jar"));
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: integration tests run after 'mvn package'");
        }
        return jar;
    }

    static Run run(Path workDir, String... args) throws IOException, InterruptedException {
        return run(workDir, Map.of(), args);
    }

    /** Runs with {@code env} added to this process's environment (the AWS SDK's default chain reads AWS_* from it). */
    static Run run(Path workDir, Map<String, String> env, String... args) throws IOException, InterruptedException {
        return run(workDir, env, null, args);
    }

    /** Runs with {@code stdin} (a file, or null for none) as standard input. */
    static Run run(Path workDir, Map<String, String> env, Path stdin, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(JarClassArchive.javaJar());
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile(workDir, "out", ".txt");
        Path err = Files.createTempFile(workDir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().putAll(env);
        if (stdin != null) {
            pb.redirectInput(stdin.toFile());
        }
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("walden " + String.join(" ", args) + " did not finish");
        }
        return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8),
                Files.readAllBytes(out));
    }
}
