package io.walden.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import io.walden.server.auth.Grant;
import io.walden.server.auth.LogGlob;
import io.walden.server.auth.Role;
import io.walden.server.auth.Tokens;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.walden.server.config.ServerSettings.AUTH_TOKEN;
import static io.walden.server.config.ServerSettings.AUTH_TOKENS;

/**
 * Reads {@code --auth-tokens FILE} (docs/operations.md, "Tokens and roles"; the format is a contract):
 * <pre>
 * tokens:
 *   - sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08   # hex SHA-256 of the token
 *     role: append                 # read, append or admin
 *     logs: ["orders*"]            # optional: glob patterns of the logs it may use; absent: every log
 * </pre>
 * Anything else is refused at start, in one line naming the file and the entry ({@code entry 2}, counted from 1), so
 * that a typo never leaves a token with more (or less) than was meant. {@code walden hash-token} prints entries.
 *
 * <p>Thread-safety: stateless; runs once, on the thread that starts the server.
 */
public final class TokensFile {
    private static final Set<String> KEYS = Set.of("sha256", "role", "logs");

    private TokensFile() {
    }

    /**
     * The server's tokens: the file's entries and {@code --auth-token} (an admin over every log), or null when neither
     * is set (no token needed anywhere).
     *
     * @throws IllegalArgumentException when {@code --auth-token} is also an entry of the file ({@code
     *                                  /etc/walden/tokens.yaml: entry 2 is the same token as --auth-token})
     */
    public static Tokens of(ServerConfig config) {
        return of(config, config.get(AUTH_TOKENS));
    }

    /** As {@link #of(ServerConfig)}, with {@code file} as the entries of {@code --auth-tokens} (the file re-read). */
    static Tokens of(ServerConfig config, List<Entry> file) {
        String token = config.get(AUTH_TOKEN);
        if (token == null && file == null) {
            return null;
        }
        Tokens.Builder b = new Tokens.Builder();
        if (token != null) {
            b.add(Tokens.sha256(token), Grant.ALL, config.given(AUTH_TOKEN).where());
        }
        for (Entry e : file == null ? List.<Entry>of() : file) {
            b.add(e.sha256(), e.grant(), e.name()); // duplicates within the file were refused as it was read
        }
        return b.build();
    }

    /** The file {@code --auth-tokens} names, or null when it is not set. */
    static Path file(ServerConfig config) {
        return config.get(AUTH_TOKENS) == null ? null : Path.of(config.given(AUTH_TOKENS).text());
    }

    /**
     * One entry of the file.
     *
     * @param name how errors name it: {@code /etc/walden/tokens.yaml: entry 2}
     */
    public record Entry(byte[] sha256, Grant grant, String name) {
    }

    /**
     * Reads the file {@code text} names (the value of {@code auth-tokens}).
     *
     * @throws IllegalArgumentException naming the file, the entry and what is wrong (the caller names the setting)
     */
    static List<Entry> read(String text) {
        Path file = Path.of(text);
        return entries(file, ConfigSources.parse(file, ""));
    }

    /** Reads {@code bytes}, the contents of {@code file}, as {@link #read(String)} reads the file. */
    static List<Entry> read(Path file, byte[] bytes) {
        return entries(file, ConfigSources.parse(file, bytes));
    }

    private static List<Entry> entries(Path file, JsonNode root) {
        if (root == null || root.isMissingNode() || !root.isObject() || !root.has("tokens")) {
            throw new IllegalArgumentException(file + ": expected 'tokens:' and a list of entries (sha256, role, logs)");
        }
        for (Iterator<String> keys = root.fieldNames(); keys.hasNext(); ) {
            String key = keys.next();
            if (!key.equals("tokens")) {
                throw new IllegalArgumentException(file + ": unknown key '" + key + "' (the file holds only 'tokens:')");
            }
        }
        JsonNode tokens = root.get("tokens");
        if (!tokens.isArray() || tokens.isEmpty()) {
            throw new IllegalArgumentException(file + ": 'tokens' must be a list of at least one entry (sha256, role, logs)");
        }
        List<Entry> entries = new ArrayList<>();
        Tokens.Builder duplicates = new Tokens.Builder();
        for (int i = 0; i < tokens.size(); i++) {
            String name = file + ": entry " + (i + 1);
            Entry e = entry(tokens.get(i), name);
            try {
                duplicates.add(e.sha256(), e.grant(), "entry " + (i + 1)); // the same token twice: which role was meant?
            } catch (IllegalArgumentException same) {
                throw new IllegalArgumentException(file + ": " + same.getMessage());
            }
            entries.add(e);
        }
        return List.copyOf(entries);
    }

    private static Entry entry(JsonNode node, String name) {
        if (!node.isObject()) {
            throw new IllegalArgumentException(name + ": expected 'sha256:', 'role:' and optionally 'logs:'");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            String key = it.next().getKey();
            if (!KEYS.contains(key)) {
                throw new IllegalArgumentException(name + ": unknown key '" + key + "' (known: logs, role, sha256)");
            }
        }
        byte[] sha256 = sha256(text(node, "sha256", name), name);
        Role role;
        try {
            role = Role.parse(text(node, "role", name));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage());
        }
        return new Entry(sha256, new Grant(role, logs(node.get("logs"), name)), name);
    }

    private static String text(JsonNode node, String key, String name) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull()) {
            throw new IllegalArgumentException(name + ": '" + key + ":' is missing");
        }
        if (!value.isTextual()) {
            throw new IllegalArgumentException(name + ": '" + key + ":' must be a single word, in quotes if need be");
        }
        return value.asText().trim();
    }

    private static byte[] sha256(String hex, String name) {
        if (hex.length() != 64) {
            throw new IllegalArgumentException(name + ": 'sha256:' must be 64 hex digits (walden hash-token prints "
                    + "them), not " + hex.length() + " characters");
        }
        try {
            return HexFormat.of().parseHex(hex);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": 'sha256:' must be 64 hex digits (walden hash-token prints "
                    + "them): '" + hex + "' holds another character");
        }
    }

    private static List<LogGlob> logs(JsonNode logs, String name) {
        if (logs == null) {
            return List.of();
        }
        if (!logs.isArray() || logs.isEmpty()) {
            throw new IllegalArgumentException(name + ": 'logs:' must be a list of glob patterns, e.g. [\"orders*\"] "
                    + "(leave it out for every log)");
        }
        List<LogGlob> globs = new ArrayList<>();
        for (JsonNode p : logs) {
            if (!p.isTextual()) {
                throw new IllegalArgumentException(name + ": 'logs:' must be a list of glob patterns, not " + p);
            }
            try {
                globs.add(LogGlob.parse(p.asText()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + ": " + e.getMessage());
            }
        }
        return globs;
    }
}
