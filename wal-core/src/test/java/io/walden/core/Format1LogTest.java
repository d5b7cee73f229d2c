package io.walden.core;

import io.walden.core.internal.recovery.LogInspector;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A log written by format 1 (no record times; {@code src/test/resources/format-1}, written by the code of that format)
 * opens, reads back record for record, keeps its cursor, and goes on with timed records of format 2.
 */
class Format1LogTest {
    @TempDir
    Path work;

    private Path copyOfSample() throws IOException, URISyntaxException {
        Path sample = Path.of(Format1LogTest.class.getResource("/format-1/log").toURI());
        Path log = work.resolve("log");
        Files.createDirectories(log);
        try (Stream<Path> files = Files.list(sample)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, log.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        return log;
    }

    private static List<String> expected() throws IOException, URISyntaxException {
        return Files.readAllLines(Path.of(Format1LogTest.class.getResource("/format-1/expected-records.txt").toURI()));
    }

    @Test
    void everyRecordOfAFormat1LogReadsBackWithoutATime() throws Exception {
        Path log = copyOfSample();
        List<String> expected = expected();
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(64 << 10).build());
             WalReader r = wal.reader(wal.oldestLsn())) {
            for (String line : expected) {
                String[] f = line.split(" ", 3);
                WalRecord rec = r.next();
                assertThat(Lsn.format(rec.lsn())).isEqualTo(f[0]);
                assertThat(rec.type()).isEqualTo(Integer.parseInt(f[1]));
                assertThat(new String(rec.payload(), StandardCharsets.UTF_8)).isEqualTo(f[2]);
                assertThat(rec.timestamp()).as("format 1 had no times").isNull();
            }
            assertThat(r.next()).isNull();
            assertThat(Lsn.format(wal.cursors().position("reader"))).isEqualTo(expected.get(1234).split(" ")[0]);
        }
    }

    @Test
    void aFormat1LogGoesOnWithTimedRecordsThatSeekByTimeFinds() throws Exception {
        Path log = copyOfSample();
        Instant before = Instant.now();
        long appended;
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(64 << 10).build())) {
            appended = wal.append("format 2".getBytes(StandardCharsets.UTF_8), Durability.LOCAL);
            assertThat(wal.lsnAt(Instant.EPOCH)).as("untimed records count as older than any time").isEqualTo(appended);
        }
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(64 << 10).build());
             WalReader r = wal.reader(appended)) {
            assertThat(r.next().timestamp()).isAfterOrEqualTo(before.minusMillis(5));
        }
        assertThat(new LogInspector(log).inspect(new LogInspector.Visitor() {
        }).clean()).as("walden verify: both formats are clean").isTrue();
    }

    @Test
    void aCursorOnARecordWithoutATimeHasAnUnknownLagNeverAFalseZero() throws Exception {
        Path log = copyOfSample();
        try (Wal wal = Wal.open(WalConfig.builder(log).segmentSize(64 << 10).build())) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            wal.meterBinder().bindTo(registry);
            wal.append("format 2".getBytes(StandardCharsets.UTF_8), Durability.LOCAL);

            // The background writer samples when the log's end passes which LSN, but only from this open on: no sample
            // can say when the end passed a record written before it.
            Cursors.Cursor reader = wal.cursors().list().get(0);
            assertThat(reader.name()).isEqualTo("reader");
            assertThat(reader.lagBytes()).isPositive();
            assertThat(reader.lagSeconds()).as("written before format 2, before this open: its age is unknown").isNaN();
            assertThat(registry.get("walden.cursor.lag.seconds").tag("cursor", "reader").gauge().value()).isNaN();

            long timed = wal.append("timed".getBytes(StandardCharsets.UTF_8), Durability.LOCAL);
            wal.cursors().commit("reader", timed);
            assertThat(lag(wal, "reader")).as("a record with a time has a known age").isNotNaN();
        }
    }

    private static double lag(Wal wal, String cursor) {
        return wal.cursors().list().stream().filter(c -> c.name().equals(cursor)).findFirst().orElseThrow().lagSeconds();
    }
}
