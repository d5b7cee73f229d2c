package io.walden.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * PostgreSQL as a peer measured inside a load generator's run, so that its figures come from the same minutes as
 * Walden's: a throwaway cluster started by {@code wal-bench/postgres.sh} (synchronous_commit=on, fdatasync, a Unix
 * socket) and {@code pgbench} windows of a one-row INSERT of 64 bytes per transaction, as {@code pgbench.sh} runs.
 *
 * <p>Thread-safety: one caller at a time.
 */
final class PostgresPeer implements AutoCloseable {
    private final Path script;
    private final Path dir;
    private final String bin;
    private final String socketDir;
    private final String port;

    private PostgresPeer(Path script, Path dir, String bin, String socketDir, String port) {
        this.script = script;
        this.dir = dir;
        this.bin = bin;
        this.socketDir = socketDir;
        this.port = port;
    }

    /**
     * A cluster in a new directory under {@code parent} (which the postgres user must be able to enter: not a private
     * temporary directory), or null (said on stdout) where PostgreSQL is not installed.
     */
    static PostgresPeer start(Path script, Path parent) throws IOException, InterruptedException {
        Path dir = parent.toAbsolutePath().resolve("pg-" + ProcessHandle.current().pid());
        Process p = new ProcessBuilder(script.toString(), "start", dir.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        int rc = p.waitFor();
        if (rc == 3) {
            System.out.println("PostgreSQL is not installed (apt-get install postgresql): not measured beside");
            return null;
        }
        if (rc != 0) {
            throw new IllegalStateException(script + " start exited with " + rc);
        }
        String[] f = out.substring(out.lastIndexOf('\n') + 1).split(" ");
        return new PostgresPeer(script, dir, f[0], f[1], f[2]);
    }

    /** {@code clients} pgbench clients for {@code seconds}: the transactions per second pgbench reports. */
    double tps(int clients, int seconds) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        command.addAll(List.of(bin + "/pgbench", "-h", socketDir, "-p", port, "-U", "postgres", "-n",
                "-f", socketDir + "/insert.sql", "-c", Integer.toString(clients), "-j", Integer.toString(Math.min(2, clients)),
                "-T", Integer.toString(seconds), "postgres"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(seconds + 60L, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("pgbench with " + clients + " clients failed:\n" + out);
        }
        for (String line : out.split("\n")) {
            if (line.startsWith("tps = ")) {
                return Double.parseDouble(line.split(" ")[2]);
            }
        }
        throw new IllegalStateException("pgbench printed no tps:\n" + out);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        new ProcessBuilder(script.toString(), "stop", dir.toString()).inheritIO().start().waitFor();
    }
}
