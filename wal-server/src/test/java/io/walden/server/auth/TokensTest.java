package io.walden.server.auth;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tokens are found by the SHA-256 of the bytes presented, never held themselves. */
class TokensTest {
    private static final Grant READ = new Grant(Role.READ, List.of());
    private static final Grant APPEND_ORDERS = new Grant(Role.APPEND, List.of(LogGlob.parse("orders*")));

    private final Tokens tokens = new Tokens.Builder()
            .add(Tokens.sha256("reader-token"), READ, "entry 1")
            .add(Tokens.sha256("orders-token"), APPEND_ORDERS, "entry 2")
            .build();

    @Test
    void shouldFindAPresentedTokenByItsHash() {
        Tokens.Lookup lookup = tokens.lookup();
        assertThat(lookup.find("Bearer reader-token", 7)).isSameAs(READ);
        assertThat(lookup.find("Bearer orders-token", 7)).as("the same lookup, reused").isSameAs(APPEND_ORDERS);
        assertThat(tokens.size()).isEqualTo(2);
    }

    @Test
    void shouldFindNoTokenThatDiffersInAnyByte() {
        Tokens.Lookup lookup = tokens.lookup();
        assertThat(lookup.find("Bearer reader-tokeN", 7)).isNull();
        assertThat(lookup.find("Bearer reader-token ", 7)).isNull();
        assertThat(lookup.find("Bearer ", 7)).isNull();
    }

    @Test
    void shouldHashTheTokenAsTheTokensFileHoldsIt() {
        // The example: 9f86d081... is the SHA-256 of "test".
        assertThat(HexFormat.of().formatHex(Tokens.sha256("test")))
                .isEqualTo("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
    }

    @Test
    void shouldRefuseTheSameTokenTwiceNamingBothEntries() {
        Tokens.Builder b = new Tokens.Builder().add(Tokens.sha256("twice"), READ, "entry 1");
        assertThatThrownBy(() -> b.add(Tokens.sha256("twice"), APPEND_ORDERS, "entry 3"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("entry 3 is the same token as entry 1: give each token once");
    }
}
