package io.walden.core.readme;

import io.walden.core.*;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

import static java.nio.charset.StandardCharsets.UTF_8;

public class Example {
    public static void main(String[] args) {
        Path dir = Path.of(args.length > 0 ? args[0] : "data/wal");
        try (Wal wal = Wal.open(WalConfig.builder(dir).build())) {
            long lsn = wal.append("hello".getBytes(UTF_8));                 // returns once forced (durability ON)
            wal.append("fast".getBytes(UTF_8), Durability.OFF);              // returns at once; forced within 200 ms
            CompletableFuture<Long> f = wal.appendAsync("async".getBytes(UTF_8), Durability.LOCAL); // no thread waits
            f.join();

            try (WalReader reader = wal.reader(lsn)) {                       // sees flushed records only (default)
                for (WalRecord r; (r = reader.next()) != null; ) {
                    System.out.println(Lsn.format(r.lsn()) + " " + new String(r.payload(), UTF_8));
                }
            }

            byte[] json = "{\"event\":\"order placed\",\"id\":42}".getBytes(UTF_8);
            wal.append(0, json, 0, json.length, Durability.ON, Compression.ZSTD); // compressed when that saves space
            wal.cursors().set("billing", lsn);                               // a consumer's durable, replicated position
            try (WalReader reader = wal.cursors().reader("billing")) {       // resume where it left off
                WalRecord next = reader.next();                              // ... process it, then:
                wal.cursors().commit("billing", next == null ? lsn : next.nextLsn());
            }
            if (wal.status().isFailed()) { /* a force failed: wal.status().failureReason() says which; reopen */ }
        }
    }
}
