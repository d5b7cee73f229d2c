package io.walden.server.config;

import io.walden.server.auth.Grant;
import io.walden.server.auth.Role;
import io.walden.server.auth.Tokens;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --auth-tokens FILE} (docs/operations.md, "Tokens and roles"): the issue's format, read at load; anything else
 * is one line naming the setting, the file and the entry.
 */
class TokensFileTest {
    /** SHA-256 of "test", the issue's example. */
    private static final String TEST_HASH = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    @TempDir
    Path dir;

    private Path file(String yaml) throws Exception {
        return Files.writeString(dir.resolve("tokens.yaml"), yaml);
    }

    private static ServerConfig load(Map<String, String> flags) {
        Map<String, String> all = new HashMap<>(flags);
        all.put("data-dir", "unused");
        return ServerConfig.load(null, all);
    }

    private String refusal(String yaml) throws Exception {
        Path f = file(yaml);
        try {
            load(Map.of("auth-tokens", f.toString()));
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
        throw new AssertionError("accepted: " + yaml);
    }

    private static String hash(String token) {
        return HexFormat.of().formatHex(Tokens.sha256(token));
    }

    @Test
    void shouldReadTheIssuesExample() throws Exception {
        Path f = file("""
                tokens:
                  - sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08   # hex SHA-256 of the token
                    role: append
                    logs: ["orders*"]        # optional; glob patterns
                  - sha256: %s
                    role: read
                """.formatted(hash("reader")));
        Tokens tokens = TokensFile.of(load(Map.of("auth-tokens", f.toString())));
        assertThat(tokens.size()).isEqualTo(2);
        Grant test = tokens.lookup().find("Bearer test", 7);
        assertThat(test.role()).isEqualTo(Role.APPEND);
        assertThat(test.describeLogs()).isEqualTo("orders*");
        assertThat(tokens.lookup().find("Bearer reader", 7).limited()).as("no logs: every log").isFalse();
    }

    @Test
    void shouldAddTheAuthTokenAsAnAdminOverEveryLog() throws Exception {
        Path f = file("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n");
        Tokens tokens = TokensFile.of(load(Map.of("auth-tokens", f.toString(), "auth-token", "the-admin")));
        assertThat(tokens.lookup().find("Bearer the-admin", 7)).isEqualTo(Grant.ALL);
        assertThat(tokens.lookup().find("Bearer test", 7).role()).isEqualTo(Role.READ);
    }

    @Test
    void shouldNeedNoTokenWhenNeitherIsSet() {
        assertThat(TokensFile.of(load(Map.of()))).isNull();
        assertThat(load(Map.of()).tokenRequired()).isFalse();
    }

    @Test
    void shouldNameTheFileAndTheEntryOfABadHash() throws Exception {
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n  - sha256: xyz\n    role: read\n"))
                .isEqualTo("--auth-tokens: " + dir.resolve("tokens.yaml") + ": entry 2: 'sha256:' must be 64 hex digits "
                        + "(walden hash-token prints them), not 3 characters");
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH.replace('f', 'g') + "\n    role: read\n"))
                .contains("entry 1: 'sha256:' must be 64 hex digits").contains("holds another character");
    }

    @Test
    void shouldNameAnUnknownRole() throws Exception {
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n    role: writer\n"))
                .endsWith("tokens.yaml: entry 1: unknown role 'writer' (read, append or admin)");
    }

    @Test
    void shouldNameABadPattern() throws Exception {
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n    logs: [\"orders[\"]\n"))
                .contains("tokens.yaml: entry 1: log pattern 'orders[' is not a glob");
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n    logs: orders\n"))
                .contains("entry 1: 'logs:' must be a list of glob patterns");
    }

    @Test
    void shouldNameAMissingOrUnknownKey() throws Exception {
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n")).endsWith("entry 1: 'role:' is missing");
        assertThat(refusal("tokens:\n  - role: read\n")).endsWith("entry 1: 'sha256:' is missing");
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n    log: [a]\n"))
                .endsWith("entry 1: unknown key 'log' (known: logs, role, sha256)");
        assertThat(refusal("token:\n  - sha256: " + TEST_HASH + "\n")).contains("expected 'tokens:'");
        assertThat(refusal("tokens: []\n")).contains("'tokens' must be a list of at least one entry");
    }

    @Test
    void shouldRefuseTheSameTokenTwice() throws Exception {
        assertThat(refusal("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n  - sha256: " + TEST_HASH.toUpperCase()
                + "\n    role: admin\n")).endsWith("tokens.yaml: entry 2 is the same token as entry 1: give each token once");
        Path f = file("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n");
        assertThatThrownBy(() -> load(Map.of("auth-tokens", f.toString(), "auth-token", "test")))
                .hasMessage(f + ": entry 1 is the same token as --auth-token: give each token once");
    }

    @Test
    void shouldNameAFileItCannotReadOrParse() throws Exception {
        assertThat(refusal("tokens: [\n")).startsWith("--auth-tokens: " + dir.resolve("tokens.yaml") + ": line ")
                .contains("not valid YAML");
        assertThatThrownBy(() -> load(Map.of("auth-tokens", dir.resolve("missing.yaml").toString())))
                .hasMessage("--auth-tokens: " + dir.resolve("missing.yaml") + ": no such file");
    }

    @Test
    void shouldCountATokensFileAsATokenRequired() throws Exception {
        Path f = file("tokens:\n  - sha256: " + TEST_HASH + "\n    role: read\n");
        assertThat(load(Map.of("auth-tokens", f.toString())).tokenRequired()).isTrue();
    }

    @Test
    void shouldGiveEachEntryTheRoleAndLogsItSays() throws Exception {
        Path f = file("tokens:\n  - sha256: " + TEST_HASH + "\n    role: admin\n    logs: [\"a*\", \"b\"]\n");
        List<TokensFile.Entry> entries = load(Map.of("auth-tokens", f.toString())).get(ServerSettings.AUTH_TOKENS);
        assertThat(entries).singleElement().satisfies(e -> {
            assertThat(e.grant().role()).isEqualTo(Role.ADMIN);
            assertThat(e.grant().describeLogs()).isEqualTo("a*, b");
            assertThat(e.name()).isEqualTo(f + ": entry 1");
        });
    }
}
