package io.walden.server.http;

import io.walden.core.SegmentPreparation;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import io.walden.server.WaldenServer;
import io.walden.server.config.ServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static io.walden.core.Eventually.waitUntil;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An append that must wait for the next segment runs off the event loop, and may still be running when its client
 * disconnects: it appends exactly the bytes the client sent, every record of a batch (the waiting task holds its own
 * reference to the request body, which the connection's end must not free under it).
 */
@Timeout(60)
class SegmentWaitAppendTest {
    @TempDir
    Path dir;

    @Test
    void shouldAppendEveryRecordOfABatchWhoseClientLeftWhileItWaitedForASegment() throws Exception {
        try (WaldenServer server = new WaldenServer(ServerConfig.load(null, Map.of("data-dir", dir.resolve("log").toString(),
                "http", "127.0.0.1:0", "replication-listen", "none", "durability", "local",
                "segment-size", Integer.toString(64 << 10)))).start()) {
            List<byte[]> records = List.of(filled('a', 3000), filled('b', 3000), filled('c', 3000));
            SegmentPreparation.holdAtFullSegment(server.wal(), 1000, () -> {
                try (Socket client = new Socket(server.boundAddress().getAddress(), server.boundAddress().getPort())) {
                    byte[] body = batch(records);
                    OutputStream out = client.getOutputStream();
                    out.write(("POST /v1/records/batch HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.write(body);
                    out.flush();
                    // The request, and its append waiting for the segment that cannot be prepared yet.
                    waitUntil(() -> server.inFlightRequests() == 2);
                } // the client leaves while its batch waits
                // A sleep: the server sees the close and ends the exchange, which nothing counts (the exchange stays
                // in flight until its append is done) and the closed client cannot see.
                Thread.sleep(300);
                return null;
            });
            waitUntil(() -> server.inFlightRequests() == 0);
            List<byte[]> appended = new ArrayList<>();
            try (WalReader reader = server.wal().reader(server.wal().oldestLsn())) {
                for (WalRecord r; (r = reader.next()) != null; ) {
                    if (r.payload().length == 3000) {
                        appended.add(r.payload());
                    }
                }
            }
            assertThat(appended).hasSize(3);
            for (int i = 0; i < 3; i++) {
                assertThat(appended.get(i)).as("record %d", i).isEqualTo(records.get(i));
            }
        }
    }

    private static byte[] filled(char c, int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) c);
        return b;
    }

    private static byte[] batch(List<byte[]> records) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (byte[] r : records) {
            out.writeInt(r.length);
            out.write(r);
        }
        return bytes.toByteArray();
    }
}
