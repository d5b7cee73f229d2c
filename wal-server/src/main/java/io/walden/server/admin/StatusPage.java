package io.walden.server.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * {@code GET /}: the status page (plain HTML and JS, no build step), served with the status of the moment in it, so
 * that its first render needs no fetch (never a blank page while a script loads); the page then polls
 * {@code /admin/status} itself.
 */
final class StatusPage {
    private static final String PLACEHOLDER = "/*INITIAL_STATUS*/null";
    private static final String TEMPLATE = load();
    private static final ObjectMapper JSON = new ObjectMapper();

    private StatusPage() {
    }

    /** The page with {@code status} ({@link StatusReport#build}) in it. */
    static String render(Map<String, Object> status) {
        try {
            // Inside a <script> element: a '<' in a string (a failure text) must not end it or open a comment.
            String json = JSON.writeValueAsString(status).replace("<", "\\u003c");
            return TEMPLATE.replace(PLACEHOLDER, json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the status did not serialize", e);
        }
    }

    private static String load() {
        try (InputStream in = StatusPage.class.getResourceAsStream("status.html")) {
            if (in == null) {
                throw new IllegalStateException("status.html is missing from the jar");
            }
            String page = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            if (!page.contains(PLACEHOLDER)) {
                throw new IllegalStateException("status.html has no " + PLACEHOLDER + " for the initial status");
            }
            return page;
        } catch (IOException e) {
            throw new IllegalStateException("status.html could not be read", e);
        }
    }
}
