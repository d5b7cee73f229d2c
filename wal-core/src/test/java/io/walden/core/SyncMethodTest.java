package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each sync method keeps what it acknowledged; the configuration words parse, and a removed one says why. */
class SyncMethodTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(SyncMethod.class)
    void shouldReturnEveryAcknowledgedRecordAfterReopeningWith(SyncMethod method) {
        long last;
        try (Wal wal = Wal.open(TestLogs.small(dir).syncMethod(method).build())) {
            for (int i = 0; i < 200; i++) {
                wal.append(TestLogs.bytes("record " + i), Durability.LOCAL);
            }
            byte[] big = new byte[3000];
            for (int i = 0; i < 60; i++) {
                wal.append(big, i % 2 == 0 ? Durability.LOCAL : Durability.OFF); // 180 KB: several segment rolls
            }
            last = wal.append(TestLogs.bytes("last"), Durability.LOCAL);
            assertThat(wal.flushedLsn()).isGreaterThan(last);
        }
        try (Wal wal = Wal.open(TestLogs.small(dir).syncMethod(method).build()); WalReader r = wal.reader(wal.oldestLsn())) {
            int n = 0;
            WalRecord rec = null;
            for (WalRecord x; (x = r.next()) != null; ) {
                rec = x;
                n++;
            }
            assertThat(n).isEqualTo(261);
            assertThat(rec.lsn()).isEqualTo(last);
            assertThat(TestLogs.string(rec.payload())).isEqualTo("last");
        }
    }

    @Test
    void shouldParseTheConfigurationWords() {
        assertThat(SyncMethod.parse("fdatasync")).isEqualTo(SyncMethod.FDATASYNC);
        assertThat(SyncMethod.parse("FSYNC")).isEqualTo(SyncMethod.FSYNC);
        assertThat(SyncMethod.parse("open_datasync")).isEqualTo(SyncMethod.OPEN_DATASYNC);
        assertThat(SyncMethod.parse("open-datasync")).isEqualTo(SyncMethod.OPEN_DATASYNC);
        assertThat(SyncMethod.parse(" none ")).isEqualTo(SyncMethod.NONE);
        assertThatThrownBy(() -> SyncMethod.parse("fdatasink")).hasMessageContaining("fdatasink")
                .hasMessageContaining("open_datasync");
    }

    @Test
    void shouldRefuseTheRemovedMsyncMethodSayingWhatToUseInstead() {
        assertThatThrownBy(() -> SyncMethod.parse("msync")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no longer exists").hasMessageContaining("fdatasync");
    }
}
