package io.walden.server.contract;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.dialect.Dialects;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The OpenAPI document ({@code io/walden/server/http/openapi.json}, served at {@code GET /v1/openapi.json}) as a
 * contract every response the HTTP tests receive is held to, with networknt's json-schema-validator and its OpenAPI
 * 3.1 dialect:
 *
 * <ul>
 *   <li>a response to a documented operation must have a documented status (or the operation's {@code default});</li>
 *   <li>its media type must be one the response declares (in {@code content}, or in
 *       {@code x-walden-negotiated-content} for an answer only an {@code Accept} asking for it gets);</li>
 *   <li>a JSON body must validate against that media type's schema, and each line of an NDJSON stream against the
 *       schema its {@code x-walden-line-schema} holds (OpenAPI 3.1 has no way to say "one of these per line");</li>
 *   <li>a response to an undocumented path (a test probing unknown routes) must still be a documented error body when
 *       it is JSON.</li>
 * </ul>
 *
 * <p>Thread-safe: tests may check responses from any thread.
 */
public final class ApiContract {
    private static final String DOCUMENT = "io/walden/server/http/openapi.json";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ApiContract INSTANCE = new ApiContract();

    private final JsonNode document;
    private final SchemaRegistry schemas = SchemaRegistry.withDialect(Dialects.getOpenApi31());
    private final Map<String, Schema> loaded = new ConcurrentHashMap<>();
    private final List<Operation> operations = new ArrayList<>();

    private record Operation(String method, String path, Pattern pattern, JsonNode node) {
    }

    private ApiContract() {
        try (InputStream in = ApiContract.class.getClassLoader().getResourceAsStream(DOCUMENT)) {
            if (in == null) {
                throw new IllegalStateException(DOCUMENT + " is not on the class path");
            }
            document = JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Iterator<Map.Entry<String, JsonNode>> paths = document.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            Pattern pattern = Pattern.compile(p.getKey().replaceAll("\\{[^/]+}", "[^/]+"));
            for (Iterator<Map.Entry<String, JsonNode>> ops = p.getValue().fields(); ops.hasNext(); ) {
                Map.Entry<String, JsonNode> op = ops.next();
                if (op.getValue().has("responses")) {
                    operations.add(new Operation(op.getKey().toUpperCase(Locale.ROOT), p.getKey(), pattern, op.getValue()));
                }
            }
        }
    }

    public static ApiContract get() {
        return INSTANCE;
    }

    /**
     * Checks one response; throws an {@link AssertionError} naming the request, the status and every violation.
     *
     * @param contentType the response's Content-Type header, or null when it has none
     * @param body        the body as received (empty for none), or null when the test did not hold it whole (a stream
     *                    read as it comes): then only the status and the media type are checked
     */
    public void check(String method, String path, int status, String contentType, byte[] body) {
        List<String> violations = violations(method, path, status, contentType, body);
        if (!violations.isEmpty()) {
            throw new AssertionError("The response to " + method + " " + path + " (" + status + ") breaks the OpenAPI"
                    + " document:\n  " + String.join("\n  ", violations) + (body == null ? "" : "\n  body: "
                    + new String(body, 0, Math.min(body.length, 2000), StandardCharsets.UTF_8)));
        }
    }

    /**
     * Checks an error response whose request is not known (a fuzzed request line): a JSON body must be the document's
     * error object.
     */
    public void checkError(int status, String contentType, byte[] body) {
        if (status >= 400 && contentType != null && contentType.startsWith("application/json")) {
            List<String> violations = validate("#/components/schemas/Error", body, false);
            if (!violations.isEmpty()) {
                throw new AssertionError("A " + status + " response is not the OpenAPI document's error object:\n  "
                        + String.join("\n  ", violations));
            }
        }
    }

    List<String> violations(String method, String path, int status, String contentType, byte[] body) {
        Optional<Operation> operation = operations.stream()
                .filter(o -> o.method.equals(method) && o.pattern.matcher(path).matches()).findFirst();
        String mediaType = contentType == null ? null : contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (operation.isEmpty()) {
            // Not a documented operation (a probe of unknown routes or methods): its errors are still the documented kind.
            return "application/json".equals(mediaType) && body != null
                    ? validate("#/components/schemas/Error", body, false) : List.of();
        }
        Operation op = operation.get();
        String pointer = "#/paths/" + escape(op.path) + "/" + op.method.toLowerCase(Locale.ROOT) + "/responses/";
        JsonNode responses = op.node.get("responses");
        String code = responses.has(Integer.toString(status)) ? Integer.toString(status)
                : responses.has("default") ? "default" : null;
        if (code == null) {
            return List.of("status " + status + " is not documented for " + op.method + " " + op.path);
        }
        JsonNode content = responses.get(code).get("content");
        if (content == null) {
            return body == null || body.length == 0 ? List.of() : List.of("a body, where the document declares none");
        }
        JsonNode negotiated = responses.get(code).get("x-walden-negotiated-content");
        if (negotiated != null && mediaType != null && negotiated.has(mediaType)) {
            return List.of(); // an answer only an Accept asking for it gets (record frames): binary, no schema to hold
        }
        if (mediaType == null || !content.has(mediaType)) {
            return List.of("media type " + mediaType + " is not one of " + names(content));
        }
        if (body == null) {
            return List.of();
        }
        pointer += code + "/content/" + escape(mediaType);
        JsonNode media = content.get(mediaType);
        if (mediaType.equals("application/json")) {
            return validate(pointer + "/schema", body, false);
        }
        if (media.has("x-walden-line-schema")) {
            return validate(pointer + "/x-walden-line-schema", body, true);
        }
        return List.of();
    }

    private List<String> validate(String pointer, byte[] body, boolean perLine) {
        Schema schema = loaded.computeIfAbsent(pointer,
                p -> schemas.getSchema(SchemaLocation.of("classpath:" + DOCUMENT + p)));
        List<String> out = new ArrayList<>();
        String text = new String(body, StandardCharsets.UTF_8);
        for (String line : perLine ? text.split("\n") : new String[] {text}) {
            if (perLine && line.isBlank()) {
                continue;
            }
            JsonNode node;
            try {
                node = JSON.readTree(line);
            } catch (IOException e) {
                out.add("not JSON: " + e.getMessage());
                continue;
            }
            for (Error error : schema.validate(node)) {
                out.add(error.toString());
            }
        }
        return out;
    }

    private static String names(JsonNode content) {
        List<String> out = new ArrayList<>();
        content.fieldNames().forEachRemaining(out::add);
        return out.toString();
    }

    /** A JSON pointer token: '~' as "~0", '/' as "~1" (RFC 6901). */
    private static String escape(String token) {
        return token.replace("~", "~0").replace("/", "~1");
    }
}
