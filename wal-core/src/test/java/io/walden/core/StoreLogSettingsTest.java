package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a store keeps of a log's own settings ({@code walden.log-settings}): every plain setting, under the name of the
 * builder method that sets it. The names are a file format: a log created by an earlier version must reopen with the
 * settings it was created with.
 */
class StoreLogSettingsTest {
    @TempDir
    Path dir;

    /** Every plain setting changed from its default, but the identity, which is never kept. */
    private WalConfig.Builder everyKeptSettingChanged() {
        WalConfig.Builder b = WalConfig.builder(dir);
        changeEverySetting(b);
        return b;
    }

    private static void changeEverySetting(WalConfig.Builder b) {
        b.segmentSize(1L << 20).maxPayloadSize(4096).walBuffers(1L << 20).spareSegments(3)
                .durability(Durability.LOCAL).syncMethod(SyncMethod.FSYNC).writerDelay(Duration.ofMillis(50))
                .offWriteDelay(Duration.ofMillis(1)).commitDelay(Duration.ofMillis(1)).commitSiblings(2)
                .remoteCommitTimeout(Duration.ofSeconds(3)).checkpointInterval(Duration.ofSeconds(2))
                .truncateAtCorruption(true).newEpochAfterCrash(true).retentionTime(Duration.ofHours(1))
                .retentionBytes(1L << 30).maxCursorRetainedBytes(1L << 31).compression(Compression.ZSTD)
                .zstdDictionary(false).zstdLevel(7).logId(42).baseLsn(1L << 20);
    }

    private Map<String, String> chosenBy(java.util.function.Consumer<WalConfig.Builder> settings) {
        return StoreLogSettings.chosen(() -> WalConfig.builder(dir), settings);
    }

    @Test
    void everyPlainSettingIsKeptUnderItsBuilderMethodsNameAndTheIdentityIsNot() {
        Map<String, String> kept = chosenBy(StoreLogSettingsTest::changeEverySetting);

        assertThat(kept).containsOnlyKeys("segmentSize", "maxPayloadSize", "walBuffers", "spareSegments", "durability",
                "syncMethod", "writerDelay", "offWriteDelay", "commitDelay", "commitSiblings", "remoteCommitTimeout",
                "checkpointInterval", "truncateAtCorruption", "newEpochAfterCrash", "retentionTime", "retentionBytes",
                "maxCursorRetainedBytes", "compression", "zstdDictionary", "zstdLevel");
        assertThat(kept).containsEntry("durability", "LOCAL").containsEntry("retentionTime", "PT1H")
                .containsEntry("zstdLevel", "7").containsEntry("truncateAtCorruption", "true");
    }

    @Test
    void everyKeptRecordHoldsOnlyValuesAFileCanHold() {
        for (Record settings : WalConfig.builder(dir).keptSettings()) {
            for (var component : settings.getClass().getRecordComponents()) {
                Class<?> t = component.getType();
                assertThat(t == long.class || t == int.class || t == boolean.class || t == Duration.class || t.isEnum())
                        .as("%s.%s, a %s: an object a store cannot keep belongs outside the kept records (as the clock)",
                                settings.getClass().getSimpleName(), component.getName(), t.getSimpleName()).isTrue();
            }
        }
    }

    @Test
    void onlyTheSettingsTheCallerSetAreKeptThoseEqualToTheDefaultsIncluded() {
        Map<String, String> kept = StoreLogSettings.chosen(() -> WalConfig.builder(dir).zstdLevel(3),
                b -> b.zstdLevel(3).retentionBytes(1L << 30));

        assertThat(kept).isEqualTo(Map.of("zstdLevel", "3", "retentionBytes", String.valueOf(1L << 30)));
    }

    @Test
    void whatWasKeptIsSetAgainOnTheBuilderAtTheNextOpen() throws Exception {
        StoreLogSettings.write(dir, chosenBy(StoreLogSettingsTest::changeEverySetting));
        WalConfig.Builder reopened = WalConfig.builder(dir);

        StoreLogSettings.apply(dir, reopened);

        WalConfig expected = everyKeptSettingChanged().logId(0).baseLsn(0).build();
        WalConfig got = reopened.build();
        assertThat(got.segmentSettings()).isEqualTo(expected.segmentSettings());
        assertThat(got.commitSettings()).isEqualTo(expected.commitSettings());
        assertThat(got.recoverySettings()).isEqualTo(expected.recoverySettings());
        assertThat(got.retentionSettings()).isEqualTo(expected.retentionSettings());
        assertThat(got.compressionSettings()).isEqualTo(expected.compressionSettings());
    }

    @Test
    void aFileAnEarlierVersionWroteIsReadUnderTheSameNames() throws Exception {
        Files.writeString(dir.resolve(StoreLogSettings.FILE), """
                #settings this log was created with, beside the store's defaults (WalStore)
                commitDelay=PT0.001S
                compression=LZ4
                durability=LOCAL
                retentionTime=PT168H
                spareSegments=0
                truncateAtCorruption=true
                zstdLevel=-5
                """);
        WalConfig.Builder b = WalConfig.builder(dir);

        StoreLogSettings.apply(dir, b);

        WalConfig c = b.build();
        assertThat(c.commitDelay()).isEqualTo(Duration.ofMillis(1));
        assertThat(c.compression()).isEqualTo(Compression.LZ4);
        assertThat(c.durability()).isEqualTo(Durability.LOCAL);
        assertThat(c.retentionTime()).isEqualTo(Duration.ofDays(7));
        assertThat(c.spareSegments()).isZero();
        assertThat(c.truncateAtCorruption()).isTrue();
        assertThat(c.zstdLevel()).isEqualTo(-5);
        assertThat(c.writerDelay()).as("not kept: the default").isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void aValueThatCannotBeReadNamesTheFileTheSettingAndTheValue() throws Exception {
        Files.writeString(dir.resolve(StoreLogSettings.FILE), "durability=SOMETIMES\n");

        assertThatThrownBy(() -> StoreLogSettings.apply(dir, WalConfig.builder(dir))).isInstanceOf(WalException.class)
                .hasMessageContaining(StoreLogSettings.FILE).hasMessageContaining("durability=SOMETIMES");
    }
}
