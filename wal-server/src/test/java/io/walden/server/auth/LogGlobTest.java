package io.walden.server.auth;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A token's log patterns are the JDK's globs over log names (docs/operations.md, "Tokens and roles"). */
class LogGlobTest {
    @Test
    void shouldMatchAStarAgainstAnyRunOfCharacters() {
        LogGlob orders = LogGlob.parse("orders*");
        assertThat(orders.matches("orders")).isTrue();
        assertThat(orders.matches("orders-eu.2")).isTrue();
        assertThat(orders.matches("order")).isFalse();
        assertThat(orders.matches("old-orders")).isFalse();
    }

    @Test
    void shouldMatchALiteralOnlyItself() {
        LogGlob audit = LogGlob.parse("audit");
        assertThat(audit.matches("audit")).isTrue();
        assertThat(audit.matches("audit2")).isFalse();
    }

    @Test
    void shouldMatchQuestionMarksBracketsAndAlternatives() {
        assertThat(LogGlob.parse("tenant-?").matches("tenant-7")).isTrue();
        assertThat(LogGlob.parse("tenant-?").matches("tenant-17")).isFalse();
        assertThat(LogGlob.parse("tenant-[0-4]*").matches("tenant-3x")).isTrue();
        assertThat(LogGlob.parse("tenant-[0-4]*").matches("tenant-5")).isFalse();
        assertThat(LogGlob.parse("{orders,invoices}").matches("invoices")).isTrue();
        assertThat(LogGlob.parse("{orders,invoices}").matches("audit")).isFalse();
    }

    @Test
    void shouldNeverMatchWhatNoLogMayBeNamed() {
        assertThat(LogGlob.parse("*").matches("default")).isTrue();
        assertThat(LogGlob.parse("*").matches("%6Frders")).as("a segment whose encoding was malformed").isFalse();
        assertThat(LogGlob.parse("*").matches("")).isFalse();
        assertThat(LogGlob.parse("*").matches("a/b")).isFalse();
    }

    @Test
    void shouldRefuseAPatternThatIsNotAGlobOrCouldNeverMatch() {
        assertThatThrownBy(() -> LogGlob.parse("orders[")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("log pattern 'orders[' is not a glob: ");
        assertThatThrownBy(() -> LogGlob.parse("logs/orders")).hasMessageContaining("could never match");
        assertThatThrownBy(() -> LogGlob.parse("Orders*")).hasMessageContaining("could never match");
        assertThatThrownBy(() -> LogGlob.parse("")).hasMessage("an empty log pattern");
    }
}
