package io.walden.core;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class WalMetricsTest {
    @TempDir
    Path dir;

    @Test
    void cursorChangesAreNotCountedAsAppendsAndTheCursorMetersCarryTheLogTag() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Wal wal = Wal.open(TestLogs.small(dir.resolve("orders")).build())) {
            wal.meterBinder().bindTo(registry);
            long first = wal.append(new byte[100], Durability.OFF);
            wal.cursors().create("billing", first);
            for (int i = 0; i < 5; i++) {
                wal.cursors().commit("billing", wal.append(new byte[100], Durability.OFF));
            }
            String text = registry.scrape();
            assertThat(text).as("the application's 6 appends, not its 6 cursor changes")
                    .contains("walden_appends_total{durability=\"off\",log=\"orders\"} 6.0")
                    .contains("walden_appends_total{durability=\"local\",log=\"orders\"} 0.0")
                    .contains("walden_cursor_lost_total{log=\"orders\"} 0.0")
                    .contains("walden_cursor_lag_bytes{cursor=\"billing\",log=\"orders\"}")
                    .contains("walden_cursor_lag_seconds{cursor=\"billing\",log=\"orders\"}");
        }
    }

    @Test
    void shouldExposeTheContractMeterNamesInPrometheusText() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Wal wal = Wal.open(TestLogs.small(dir.resolve("orders")).build())) {
            wal.meterBinder().bindTo(registry);
            for (int i = 0; i < 10; i++) {
                wal.append(new byte[100], Durability.LOCAL);
            }
            wal.append(new byte[100], Durability.OFF);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread th = new Thread(() -> {
                    for (int i = 0; i < 2000; i++) {
                        wal.append(new byte[40], Durability.ON);
                    }
                });
                threads.add(th);
                th.start();
            }
            for (Thread th : threads) {
                th.join();
            }
            String text = registry.scrape();
            assertThat(text)
                    .contains("walden_appends_total{durability=\"local\",log=\"orders\"} 10.0")
                    .contains("walden_appends_total{durability=\"off\",log=\"orders\"} 1.0")
                    .contains("walden_appends_total{durability=\"on\",log=\"orders\"} 8000.0")
                    .contains("walden_append_bytes_total{log=\"orders\"} 321100.0")
                    .contains("walden_flushes_total{log=\"orders\"}")
                    .contains("walden_flush_duration_seconds{log=\"orders\",quantile=\"0.99\"}")
                    .contains("walden_flush_duration_seconds_count{log=\"orders\"}")
                    .contains("walden_commits_per_flush{log=\"orders\",quantile=\"0.5\"}")
                    .contains("walden_flush_commits_bucket{log=\"orders\",le=\"16.0\"}")
                    .contains("walden_flush_latency_seconds_bucket{log=\"orders\",le=\"0.001\"}")
                    .contains("walden_lsn{log=\"orders\",position=\"flushed\"} " + (double) wal.flushedLsn())
                    .contains("walden_segments{log=\"orders\"}")
                    .contains("walden_segment_rolls_total{log=\"orders\"}")
                    .contains("walden_segment_recycles_total{log=\"orders\"}");
            double flushes = registry.get("walden.flushes").functionCounter().count();
            double perFlushSum = registry.get("walden.commits.per.flush").summary().totalAmount();
            assertThat(flushes).isEqualTo(wal.status().flushCount()).isLessThan(8010);
            assertThat(perFlushSum).as("durable commits are counted by the flushes that serve them")
                    .isBetween(8010.0 - 8, 8010.0);
            assertThat(perFlushSum / flushes).as("group commit: 4 committers share flushes").isGreaterThan(1.0);
        }
    }
}
