package io.walden.server.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/operations.md's settings table ("Configuration") says what {@link ServerSettings} declares, as
 * {@code conf/walden.yaml} does ({@link ConfigTemplateTest}): a row for every setting, in {@code --help}'s order,
 * naming its flag and its YAML key, with the default it declares; no row for a setting that does not exist.
 */
class SettingsTableTest {
    private static final Path GUIDE = Path.of("..", "docs", "operations.md");
    private static final String HEADER = "| flag / key | default | meaning |";
    /** A row's first two cells: the names, the default (neither holds a '|'). */
    private static final Pattern ROW = Pattern.compile("^\\| ([^|]+) \\| ([^|]+) \\|");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");
    /** A default a setting without a declared value states in its help: "(default: 64MiB, or ...)". */
    private static final Pattern HELP_DEFAULT = Pattern.compile("\\(default: ([^,;) ]+)");

    /**
     * One row of the table.
     *
     * @param flags   the flags its first cell names ({@code --key})
     * @param keys    the YAML keys its first cell names
     * @param value   its default cell
     */
    private record Row(List<String> flags, List<String> keys, String value) {
    }

    private static List<Row> rows() throws IOException {
        List<String> lines = Files.readAllLines(GUIDE);
        int header = lines.indexOf(HEADER);
        assertThat(header).as("the settings table of %s, headed %s", GUIDE, HEADER).isNotNegative();
        List<Row> rows = new ArrayList<>();
        for (String line : lines.subList(header + 2, lines.size())) {
            Matcher row = ROW.matcher(line);
            if (!row.find()) {
                break;
            }
            List<String> flags = new ArrayList<>();
            List<String> keys = new ArrayList<>();
            for (Matcher name = CODE.matcher(row.group(1)); name.find(); ) {
                (name.group(1).startsWith("--") ? flags : keys).add(name.group(1));
            }
            rows.add(new Row(flags, keys, row.group(2).trim()));
        }
        return rows;
    }

    /** The setting {@code name} is the key of (not an older name), or null. */
    private static Setting<?> keyed(String name) {
        Setting<?> s = ServerSettings.named(name);
        return s != null && s.key().equals(name) ? s : null;
    }

    /** The default as the table should give it: the declared value, else the one the help states, else none. */
    private static String declaredDefault(Setting<?> s) {
        if (s.defaultValue() != null) {
            return s.defaultValue();
        }
        Matcher stated = HELP_DEFAULT.matcher(s.help());
        return stated.find() ? stated.group(1) : "none";
    }

    @Test
    void everyRowNamesExistingSettingsByTheirFlagAndTheirKey() throws Exception {
        for (Row row : rows()) {
            assertThat(row.flags()).as("a row of %s names no flag: %s", GUIDE, row).isNotEmpty();
            for (String flag : row.flags()) {
                assertThat(keyed(flag.substring(2))).as("%s in %s is a setting of ServerSettings", flag, GUIDE).isNotNull();
            }
            assertThat(row.keys()).as("the YAML keys of the row of %s", row.flags())
                    .containsExactlyElementsOf(row.flags().stream().map(f -> f.substring(2)).toList());
        }
    }

    @Test
    void everySettingHasARowInTheOrderHelpListsThem() throws Exception {
        List<String> listed = rows().stream().flatMap(r -> r.flags().stream()).map(f -> f.substring(2)).toList();
        assertThat(listed).as("the settings in %s, as ServerSettings.ALL lists them", GUIDE)
                .containsExactlyElementsOf(ServerSettings.ALL.stream().map(Setting::key).toList());
    }

    @Test
    void everyRowGivesTheDefaultItsSettingDeclares() throws Exception {
        for (Row row : rows()) {
            for (String flag : row.flags()) {
                Setting<?> s = keyed(flag.substring(2));
                if (s == null) {
                    continue; // said by the test above
                }
                String value = row.value().replace("`", "");
                if (s.machineDefault()) {
                    assertThat(value).as("the default of %s depends on the machine", flag).doesNotStartWith("none");
                } else {
                    assertThat(value.split("[ ,]")[0]).as("the default of %s in %s", flag, GUIDE).isEqualTo(declaredDefault(s));
                }
            }
        }
    }
}
