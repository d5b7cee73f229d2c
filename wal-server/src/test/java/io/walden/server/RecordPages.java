package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.walden.core.Lsn;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/** Reads every record of a log over the data API, page by page, the way the tests' clients do. */
final class RecordPages {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A GET of a path (with its query) on some server. */
    @FunctionalInterface
    interface Get {
        HttpResponse<String> get(String pathAndQuery) throws Exception;
    }

    private RecordPages() {
    }

    /**
     * Every record at {@code recordsPath} ({@code /v1/logs/orders/records}), LSN → payload as UTF-8, from the oldest
     * kept; a page answered other than 200 fails the test with its body.
     */
    static Map<Long, String> read(Get get, String recordsPath) throws Exception {
        Map<Long, String> out = new TreeMap<>();
        String from = null; // the oldest record kept
        while (true) {
            HttpResponse<String> response = get.get(recordsPath + "?limit=1000" + (from == null ? "" : "&from=" + from));
            if (response.statusCode() != 200) {
                throw new AssertionError("reading " + recordsPath + " from " + from + ": " + response.statusCode() + " "
                        + response.body());
            }
            JsonNode page = JSON.readTree(response.body());
            for (JsonNode r : page.get("records")) {
                out.put(Lsn.parse(r.get("lsn").asText()), new String(Base64.getDecoder()
                        .decode(r.get("data").asText()), StandardCharsets.UTF_8));
            }
            if (page.get("records").isEmpty()) {
                return out;
            }
            from = page.get("next").asText();
        }
    }
}
