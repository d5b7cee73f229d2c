package io.walden.server;

import java.nio.charset.StandardCharsets;

/** Test payloads: order events of about 400 bytes, different for every number, alike in shape (what a zstd dictionary learns). */
public final class OrderEvents {
    private OrderEvents() {
    }

    public static byte[] event(int i) {
        StringBuilder b = new StringBuilder("{\"event\":\"order-placed\",\"sequence\":").append(i).append(",\"lines\":[");
        for (int line = 0; line < 4; line++) {
            b.append(line == 0 ? "" : ",").append("{\"sku\":\"SKU-").append(1000 + (i * 31 + line * 7) % 500)
                    .append("\",\"quantity\":").append(1 + (i + line) % 3).append(",\"currency\":\"EUR\",\"unit_price\":")
                    .append((i * 17 + line) % 10_000 / 100.0).append('}');
        }
        return b.append("],\"customer\":").append(100_000 + i * 7919 % 900_000).append('}').toString()
                .getBytes(StandardCharsets.UTF_8);
    }
}
