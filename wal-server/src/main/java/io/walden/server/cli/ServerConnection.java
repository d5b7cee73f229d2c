package io.walden.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * How the console tools ({@code append}, {@code tail}) reach a running server: {@code --url} and {@code --token}, or
 * {@code WALDEN_URL} and {@code WALDEN_TOKEN} (a token in the environment stays out of {@code ps}). One HTTP/1.1
 * connection, kept alive, through the JDK's client. A mixin: each tool declares the same two options.
 */
final class ServerConnection {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--url", paramLabel = "URL", defaultValue = "${env:WALDEN_URL:-http://127.0.0.1:7400}",
            description = "The server (default: $WALDEN_URL, else ${DEFAULT-VALUE}).")
    String url;

    @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:WALDEN_TOKEN}",
            description = "Its auth token, if it has one (default: $WALDEN_TOKEN).")
    String token;

    private HttpClient client;

    /** An answer: its status and its body read as JSON (null when it is not JSON). */
    record Answer(int status, JsonNode body, String text) {
        boolean ok() {
            return status == 200;
        }

        /** The server's error as one line: {@code 413 payload_too_large: <detail>}. */
        String error() {
            if (body != null && body.has("error")) {
                return status + " " + body.get("error").asText() + ": " + body.path("detail").asText();
            }
            return status + " " + text.strip();
        }
    }

    Answer get(String pathAndQuery, Duration timeout) throws IOException, InterruptedException {
        return send(request(pathAndQuery, timeout).GET());
    }

    Answer post(String pathAndQuery, byte[] body) throws IOException, InterruptedException {
        return send(request(pathAndQuery, Duration.ofMinutes(5)).POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    Answer put(String pathAndQuery, String json) throws IOException, InterruptedException {
        return send(request(pathAndQuery, Duration.ofMinutes(1)).header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    private HttpRequest.Builder request(String pathAndQuery, Duration timeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url.replaceAll("/+$", "") + pathAndQuery)).timeout(timeout);
        if (token != null && !token.isEmpty()) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private Answer send(HttpRequest.Builder request) throws IOException, InterruptedException {
        if (client == null) {
            // A server of a cluster answers for a log led elsewhere with 307 to its primary (docs/cluster.md): followed,
            // with the same method, body and token; never from https to http.
            client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                    .followRedirects(HttpClient.Redirect.NORMAL).build();
        }
        HttpResponse<String> r;
        try {
            r = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new UserError("cannot connect to " + url + " (is `walden serve` running there? --url or WALDEN_URL)");
        }
        JsonNode body = null;
        if (r.headers().firstValue("content-type").orElse("").startsWith("application/json")) {
            body = JSON.readTree(r.body());
        }
        return new Answer(r.statusCode(), body, r.body());
    }
}
