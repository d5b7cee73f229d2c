package io.walden.server.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution's {@code conf/walden.yaml} is the settings' template: every setting, commented out with its
 * default, as {@link ConfigTemplate} renders it from their one declaration.
 */
class ConfigTemplateTest {
    private static final Path SHIPPED = Path.of("src/dist/conf/walden.yaml");

    @TempDir
    Path dir;

    @Test
    void theShippedConfigurationFileIsTheTemplateRenderedFromTheSettings() throws Exception {
        String rendered = ConfigTemplate.render();
        if (Boolean.getBoolean("walden.regenerate")) {
            Files.writeString(SHIPPED, rendered);
        }
        assertThat(Files.readString(SHIPPED))
                .as("%s is rendered from ServerSettings: regenerate it with "
                        + "mvn -pl wal-server test -Dtest=ConfigTemplateTest -Dwalden.regenerate=true", SHIPPED)
                .isEqualTo(rendered);
    }

    @Test
    void everySettingIsListedWithItsDefault() {
        String rendered = ConfigTemplate.render();
        for (Setting<?> s : ServerSettings.ALL) {
            assertThat(rendered).contains("# " + s.key() + ":");
        }
    }

    @Test
    void theFileAsShippedChangesNothing() throws Exception {
        ServerConfig fromFile = ServerConfig.load(SHIPPED, Map.of());
        ServerConfig defaults = ServerConfig.load(null, Map.of());
        for (Setting<?> s : ServerSettings.ALL) {
            assertThat(String.valueOf(fromFile.get(s))).as(s.key()).isEqualTo(String.valueOf(defaults.get(s)));
        }
    }

    @Test
    void everyDefaultUncommentedReadsBackAsTheDefault() throws Exception {
        StringBuilder uncommented = new StringBuilder();
        for (String line : ConfigTemplate.render().split("\n")) {
            if (line.matches("# [a-z0-9-]+: .+") && ServerSettings.named(line.substring(2, line.indexOf(':'))) != null) {
                uncommented.append(line.substring(2)).append('\n');
            }
        }
        Path yaml = dir.resolve("walden.yaml");
        Files.writeString(yaml, uncommented);
        ServerConfig fromFile = ServerConfig.load(yaml, Map.of());
        ServerConfig defaults = ServerConfig.load(null, Map.of());
        for (Setting<?> s : ServerSettings.ALL) {
            assertThat(String.valueOf(fromFile.get(s))).as(s.key()).isEqualTo(String.valueOf(defaults.get(s)));
        }
    }
}
