package io.walden.server.config;

import io.walden.core.Durability;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The settings as an operator writes them (docs/operations.md): one syntax per kind, the same in flags and YAML, older
 * names still accepted, and unknown keys refused with the known ones named.
 */
class ServerSettingsTest {
    @TempDir
    Path dir;

    private static ServerConfig flags(String... keysAndValues) throws Exception {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            flags.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return ServerConfig.load(null, flags);
    }

    @Test
    void sizesTakeBinaryUnitsAndAPlainNumberIsBytes() throws Exception {
        ServerConfig c = flags("segment-size", "1MiB", "archive-max-pending-bytes", "4GiB", "max-batch-bytes", "65536");
        assertThat(c.get(ServerSettings.SEGMENT_SIZE)).isEqualTo(1L << 20);
        assertThat(c.walConfig().segmentSize()).isEqualTo(1L << 20);
        assertThat(c.get(ServerSettings.ARCHIVE_MAX_PENDING_BYTES)).isEqualTo(4L << 30);
        assertThat(c.get(ServerSettings.MAX_BATCH_BYTES)).isEqualTo(65536L);
        assertThat(flags("max-slot-retained-bytes", "512mb").get(ServerSettings.MAX_SLOT_RETAINED_BYTES)).isEqualTo(512L << 20);
    }

    @Test
    void aSizeWithAnUnknownUnitIsRefusedNamingTheSetting() {
        assertThatThrownBy(() -> flags("segment-size", "64MB/s")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("segment-size").hasMessageContaining("64MB/s");
        assertThatThrownBy(() -> flags("max-batch-bytes", "12 parsecs")).hasMessageContaining("unknown size unit");
    }

    @Test
    void sizesAndDurationsTakeUnitsInTheYamlFileToo() throws Exception {
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, "segment-size: 2MiB\nwriter-delay: 50ms\narchive-timeout: 5m\nremote-commit-timeout: 2s\n");
        ServerConfig c = ServerConfig.load(yaml, Map.of());
        assertThat(c.walConfig().segmentSize()).isEqualTo(2L << 20);
        assertThat(c.walConfig().writerDelay()).isEqualTo(Duration.ofMillis(50));
        assertThat(c.get(ServerSettings.ARCHIVE_TIMEOUT)).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.walConfig().remoteCommitTimeout()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void theOlderMillisecondNamesStillWorkAsFlagsAndYamlKeys() throws Exception {
        ServerConfig c = flags("writer-delay-ms", "50", "remote-commit-timeout-ms", "1500", "stream-write-timeout-ms", "1000",
                "coordinator-session-timeout-ms", "3000");
        assertThat(c.walConfig().writerDelay()).isEqualTo(Duration.ofMillis(50));
        assertThat(c.walConfig().remoteCommitTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.get(ServerSettings.STREAM_WRITE_TIMEOUT)).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.coordinatorSessionTimeoutMillis()).isEqualTo(3000);
        Path yaml = dir.resolve("old.yaml");
        Files.writeString(yaml, "writer-delay-ms: 20\n");
        assertThat(ServerConfig.load(yaml, Map.of()).walConfig().writerDelay()).isEqualTo(Duration.ofMillis(20));
    }

    @Test
    void flagsWinOverTheYamlFileWhichWinsOverTheDefaults() throws Exception {
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, "durability: local\nmax-readers: 8\n");
        ServerConfig c = ServerConfig.load(yaml, Map.of("durability", "off"));
        assertThat(c.get(ServerSettings.DURABILITY)).isEqualTo(Durability.OFF);
        assertThat(c.get(ServerSettings.MAX_READERS)).isEqualTo(8);
        assertThat(c.get(ServerSettings.MAX_CONNECTIONS)).isEqualTo(1024);
    }

    @Test
    void anUnknownKeyIsRefusedNamingTheKnownOnes() throws Exception {
        assertThatThrownBy(() -> flags("segment-sise", "1MiB")).hasMessageContaining("unknown setting 'segment-sise'")
                .hasMessageContaining("segment-size");
        Path yaml = dir.resolve("typo.yaml");
        Files.writeString(yaml, "durabilty: off\n");
        assertThatThrownBy(() -> ServerConfig.load(yaml, Map.of())).hasMessageContaining("unknown setting 'durabilty'")
                .hasMessageContaining(yaml.toString());
    }

    @Test
    void replicationListenNoneTurnsTheListenerOffAndNeedsNoSecretBesideAToken() throws Exception {
        ServerConfig c = flags("replication-listen", "none", "auth-token", "t");
        assertThat(c.replicationListen()).isNull();
        assertThat(flags("auth-token", "t").replicationListen()).as("a primary listens by default")
                .isEqualTo(ServerConfig.parseAddress(ServerConfig.DEFAULT_REPLICATION, "test"));
        assertThatThrownBy(() -> flags("replication-listen", "none", "sync-replicas", "FIRST 1 (r1)"))
                .hasMessageContaining("replication-listen is none");
    }

    @Test
    void everySettingHasHelpAndItsDefaultReadsAsItsType() {
        for (Setting<?> s : ServerSettings.ALL) {
            assertThat(s.help()).as(s.key()).isNotBlank().endsWith(".");
            if (s.defaultValue() != null) {
                assertThat(s.read(s.defaultValue(), "the default")).as(s.key()).isNotNull();
            }
        }
    }

    @Test
    void aDurationWithoutAUnitIsRefusedUnlessTheSettingHadAnOlderMillisecondName() throws Exception {
        for (String key : new String[] {"retention-time", "archive-timeout", "checkpoint-interval"}) {
            assertThatThrownBy(() -> flags(key, "7")).as(key)
                    .hasMessage("--" + key + ": '7' needs a unit: 7ms, 7s, 7m, 7h or 7d");
        }
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, "retention-time: 7\n");
        assertThatThrownBy(() -> ServerConfig.load(yaml, Map.of()))
                .hasMessage(yaml + ": retention-time: '7' needs a unit: 7ms, 7s, 7m, 7h or 7d");
        assertThat(flags("archive-timeout", "0").get(ServerSettings.ARCHIVE_TIMEOUT)).as("0 in any unit").isZero();
        assertThat(flags("writer-delay", "50").walConfig().writerDelay()).as("writer-delay was writer-delay-ms")
                .isEqualTo(Duration.ofMillis(50));
        assertThat(flags("stream-write-timeout", "1500").get(ServerSettings.STREAM_WRITE_TIMEOUT))
                .isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void aDurationLongerThanTheLogCanCountIsRefusedNamingTheSetting() throws Exception {
        assertThatThrownBy(() -> flags("retention-time", "999999999999999d"))
                .hasMessage("--retention-time: '999999999999999d' is too long: at most 106751d");
        assertThatThrownBy(() -> flags("writer-delay", "300000d"))
                .hasMessage("--writer-delay: '300000d' is too long: at most 106751d");
        assertThatThrownBy(() -> flags("remote-commit-timeout-ms", "99999999999999999999"))
                .hasMessageStartingWith("--remote-commit-timeout-ms: '99999999999999999999' is too long");
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, "remote-commit-timeout: 300000d\n");
        assertThatThrownBy(() -> ServerConfig.load(yaml, Map.of()))
                .hasMessage(yaml + ": remote-commit-timeout: '300000d' is too long: at most 106751d");
        assertThat(flags("retention-time", "106751d").get(ServerSettings.RETENTION_TIME)).isEqualTo(Duration.ofDays(106751));
    }

    @Test
    void aKeyOrFlagLeftEmptyIsRefusedNamingIt() throws Exception {
        Path yaml = dir.resolve("walden.yaml");
        for (String empty : new String[] {"auth-token:\n", "auth-token: ''\n", "replication-secret:\n",
                "replication-secret: \"  \"\n"}) {
            Files.writeString(yaml, empty);
            String key = empty.substring(0, empty.indexOf(':'));
            assertThatThrownBy(() -> ServerConfig.load(yaml, Map.of())).as(empty)
                    .hasMessage(yaml + ": " + key + ": has no value (remove it to use the default)");
        }
        assertThatThrownBy(() -> flags("auth-token", "")).hasMessage("--auth-token: has no value (remove it to use the default)");
    }

    @Test
    void aValueTheLogRefusesIsNamedAsTheUserGaveIt() throws Exception {
        assertThatThrownBy(() -> flags("segment-size", "3MiB"))
                .hasMessage("--segment-size: must be a power of two from 64 KiB to 1 GiB, not 3MiB");
        assertThatThrownBy(() -> flags("retention-time", "0")).hasMessage("--retention-time: must be positive, not 0");
        assertThatThrownBy(() -> flags("writer-delay-ms", "0")).hasMessage("--writer-delay-ms: must be positive, not 0");
        assertThatThrownBy(() -> flags("zstd-level", "23")).hasMessageStartingWith("--zstd-level: must be between ")
                .hasMessageEndingWith(", not 23");
        assertThatThrownBy(() -> flags("wal-buffers", "100000"))
                .hasMessage("--wal-buffers: must be a power of two from 64 KiB to 1 GiB, not 100000");
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, "segment-size: 3MiB\n");
        assertThatThrownBy(() -> ServerConfig.load(yaml, Map.of()))
                .hasMessage(yaml + ": segment-size: must be a power of two from 64 KiB to 1 GiB, not 3MiB");
    }

    @Test
    void aConfigFileThatIsMissingOrNotYamlIsNamedWithWhereItWentWrong() throws Exception {
        Path missing = dir.resolve("missing.yaml");
        assertThatThrownBy(() -> ServerConfig.load(missing, Map.of())).hasMessage("--config " + missing + ": no such file");
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, "segment-size: 1MiB\n  http: 127.0.0.1:7400\n");
        assertThatThrownBy(() -> ServerConfig.load(yaml, Map.of()))
                .hasMessage(yaml + ": line 2, column 7: not valid YAML: mapping values are not allowed here");
    }
}
