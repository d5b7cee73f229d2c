package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code walden serve} (the real jar, in a child process) makes of the settings it is given: a mistake is one line
 * naming the flag, or the file and its key, with status 2 and no stack trace, and a start that fails leaves the log as
 * it found it; the log shows sizes and durations as they are written.
 */
class ServeSettingsIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path work;

    private WaldenJar.Run serve(String... settings) throws Exception {
        String[] args = new String[settings.length + 5];
        args[0] = "serve";
        args[1] = "--data-dir";
        args[2] = work.resolve("data").toString();
        args[3] = "--replication-listen";
        args[4] = "none";
        System.arraycopy(settings, 0, args, 5, settings.length);
        return WaldenJar.run(work, args);
    }

    private Path yaml(String text) throws Exception {
        return Files.writeString(work.resolve("walden.yaml"), text);
    }

    @Test
    void aDurationTooLongForTheLogIsOneLineNamingTheFlagOrKey() throws Exception {
        WaldenJar.assertOneLineUserError(serve("--retention-time", "999999999999999d"),
                "walden serve: --retention-time: '999999999999999d' is too long: at most 106751d");
        WaldenJar.assertOneLineUserError(serve("--writer-delay", "300000d"), "--writer-delay: '300000d' is too long");
        WaldenJar.assertOneLineUserError(serve("--remote-commit-timeout", "300000d"),
                "--remote-commit-timeout: '300000d' is too long");
        Path yaml = yaml("writer-delay: 300000d\n");
        WaldenJar.assertOneLineUserError(serve("--config", yaml.toString()), yaml + ": writer-delay: '300000d' is too long");
    }

    @Test
    void aDurationWithoutAUnitIsRefusedWhereItsUnitWouldBeAGuess() throws Exception {
        WaldenJar.assertOneLineUserError(serve("--retention-time", "7"),
                "walden serve: --retention-time: '7' needs a unit: 7ms, 7s, 7m, 7h or 7d");
        Path yaml = yaml("retention-time: 7\n");
        WaldenJar.assertOneLineUserError(serve("--config", yaml.toString()), yaml + ": retention-time: '7' needs a unit");
    }

    @Test
    void aConfigFileThatIsMissingOrNotYamlIsOneLineNamingTheFile() throws Exception {
        Path missing = work.resolve("missing.yaml");
        WaldenJar.assertOneLineUserError(serve("--config", missing.toString()), "--config " + missing + ": no such file");
        Path yaml = yaml("durability: on\n  http: 127.0.0.1:0\n");
        WaldenJar.assertOneLineUserError(serve("--config", yaml.toString()),
                yaml + ": line 2, column 7: not valid YAML: mapping values are not allowed here");
    }

    @Test
    void anEmptyTokenOrSecretInTheConfigFileIsRefusedNamingTheKey() throws Exception {
        for (String key : new String[] {"auth-token", "replication-secret"}) {
            Path yaml = yaml("http: 127.0.0.1:0\n" + key + ":\n");
            WaldenJar.assertOneLineUserError(serve("--config", yaml.toString()), yaml + ": " + key + ": has no value");
        }
    }

    @Test
    void aValueTheLogRefusesIsNamedByItsFlag() throws Exception {
        String line = WaldenJar.assertOneLineUserError(serve("--segment-size", "3MiB"),
                "walden serve: --segment-size: must be a power of two from 64 KiB to 1 GiB, not 3MiB");
        assertThat(line).doesNotContain("segmentSize");
    }

    @Test
    void anAddressInUseIsOneLineNamingTheFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String port = Integer.toString(taken.getLocalPort());
            WaldenJar.assertOneLineUserError(serve("--http", "127.0.0.1:" + port),
                    "walden serve: cannot listen on 127.0.0.1:" + port + " (--http): ");
            WaldenJar.assertOneLineUserError(WaldenJar.run(work, "serve", "--data-dir", work.resolve("data").toString(),
                    "--http", "127.0.0.1:0", "--replication-listen", "127.0.0.1:" + port),
                    "walden serve: cannot listen for replicas on 127.0.0.1:" + port + " (--replication-listen): ");
        }
    }

    /**
     * A start that fails is not a crash: the log is left as it was found, and the next start begins no epoch (one that
     * died without closing the log made every later start begin one, as after a crash).
     */
    @Test
    void failedStartsLeaveTheLogInTheEpochTheyFoundItIn() throws Exception {
        Path data = work.resolve("data");
        try (ServerProcess server = ServerProcess.start(work, data, ServerProcess.freePort())) {
            assertThat(JSON.readTree(server.get("/admin/status").body()).get("epoch").asInt()).isEqualTo(1);
            assertThat(server.terminate()).isEqualTo(143);
        }
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String port = Integer.toString(taken.getLocalPort());
            assertThat(serve("--http", "127.0.0.1:" + port).exitCode()).isEqualTo(2);
            assertThat(serve("--http", "127.0.0.1:" + port).exitCode()).isEqualTo(2);
            // Refused once the log is open: that start closes it again.
            assertThat(WaldenJar.run(work, "serve", "--data-dir", data.toString(), "--http", "127.0.0.1:0",
                    "--replication-listen", "127.0.0.1:" + port).exitCode()).isEqualTo(2);
        }
        try (ServerProcess server = ServerProcess.start(work, data, ServerProcess.freePort())) {
            JsonNode status = JSON.readTree(server.get("/admin/status").body());
            assertThat(status.get("epoch").asInt()).as(status.toString()).isEqualTo(1);
        }
    }

    @Test
    void theLogShowsRetentionAsItIsWritten() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--retention-time", "7d", "--retention-bytes", "100GiB")) {
            assertThat(server.output()).contains("once all their records are older than 7d, and while the log holds "
                    + "more than 100GiB;").doesNotContain("PT168H");
        }
    }

    @Test
    void aSynchronousPolicyOnAPrimaryThatAcceptsNoReplicasIsAConflictSayingWhichFlagToSet() throws Exception {
        try (ServerProcess server = ServerProcess.start(work, work.resolve("data"), ServerProcess.freePort(),
                "--replication-listen", "none")) {
            HttpResponse<String> r = server.put("/admin/sync-replicas", "FIRST 1 (r1)");
            assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
            JsonNode error = JSON.readTree(r.body());
            assertThat(error.get("error").asText()).isEqualTo("no_replication");
            assertThat(error.get("detail").asText()).startsWith("this primary accepts no replicas")
                    .contains("--replication-listen").doesNotContain("null");
        }
    }
}
