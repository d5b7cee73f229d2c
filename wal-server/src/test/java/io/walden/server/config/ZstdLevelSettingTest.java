package io.walden.server.config;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --zstd-level}: the log's zstd level, refused at start when it is not one zstd has. */
class ZstdLevelSettingTest {
    @Test
    void shouldCompressAtLevelOneUnlessTold() throws Exception {
        assertThat(ServerConfig.load(null, Map.of()).walConfig().zstdLevel()).isEqualTo(1);
    }

    @Test
    void shouldPassTheLevelGivenToTheLog() throws Exception {
        assertThat(ServerConfig.load(null, Map.of("zstd-level", "-5")).walConfig().zstdLevel()).isEqualTo(-5);
    }

    @Test
    void shouldRefuseALevelThatIsNotANumber() {
        assertThatThrownBy(() -> ServerConfig.load(null, Map.of("zstd-level", "fast")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zstd-level").hasMessageContaining("fast");
    }

    @Test
    void shouldRefuseALevelZstdDoesNotHave() {
        assertThatThrownBy(() -> ServerConfig.load(null, Map.of("zstd-level", "23")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--zstd-level: must be between ");
    }
}
