package io.walden.server.http;

import io.netty.handler.codec.http.HttpResponseStatus;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /v1/openapi.json}: the HTTP API as an OpenAPI 3.1 document, kept beside the route table and held to it
 * by {@code ApiDocumentTest} (every route is in it, everything in it is routed, and docs/http-api.md lists the same
 * endpoints). Clients in any language can be generated from it.
 */
final class ApiDocument {
    private static final String DOCUMENT = load();

    private ApiDocument() {
    }

    static void serve(Exchange ex) {
        ex.text(HttpResponseStatus.OK, DOCUMENT, "application/json");
    }

    /** The document's text, as served. */
    static String text() {
        return DOCUMENT;
    }

    private static String load() {
        try (InputStream in = ApiDocument.class.getResourceAsStream("openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("openapi.json could not be read", e);
        }
    }
}
