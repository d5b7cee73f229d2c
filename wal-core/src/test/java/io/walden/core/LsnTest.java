package io.walden.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LsnTest {
    @Test
    void shouldFormatAsPostgreSqlDoes() {
        assertThat(Lsn.format(0x16B374D848L)).isEqualTo("16/B374D848");
        assertThat(Lsn.format(0)).isEqualTo("0/0");
        assertThat(Lsn.format(64)).isEqualTo("0/40");
        assertThat(Lsn.format(-1L)).isEqualTo("FFFFFFFF/FFFFFFFF");
    }

    @Test
    void shouldParseBothTheSlashFormAndDecimal() {
        assertThat(Lsn.parse("16/B374D848")).isEqualTo(0x16B374D848L);
        assertThat(Lsn.parse("16/b374d848")).isEqualTo(0x16B374D848L);
        assertThat(Lsn.parse(" 0/40 ")).isEqualTo(64);
        assertThat(Lsn.parse("1024")).isEqualTo(1024);
        assertThat(Lsn.parse(Lsn.format(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void shouldRejectMalformedLsnsWithTheTextInTheMessage() {
        for (String bad : new String[] {"", "/", "1/", "/1", "x/1", "1/2/3", "123456789/0", "-5", "0x10"}) {
            assertThatThrownBy(() -> Lsn.parse(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'");
        }
        assertThatThrownBy(() -> Lsn.parse(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldRejectASignedHalfOrAValueBeyondTheLargestLsn() {
        // Found by fuzzing the slots file: "0/-D510" parsed as a negative LSN.
        for (String bad : new String[] {"0/-D510", "-1/0", "+1/0", "0/+10", "80000000/0", "FFFFFFFF/FFFFFFFF"}) {
            assertThatThrownBy(() -> Lsn.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Lsn.parse("7FFFFFFF/FFFFFFFF")).isEqualTo(Long.MAX_VALUE);
    }
}
