package io.walden.server.config;

import java.util.ArrayList;
import java.util.List;

/**
 * The configuration file the distribution ships ({@code conf/walden.yaml}): every setting of {@link ServerSettings},
 * in {@code --help}'s order, commented out with its help and its default, so that an operator sees them all in one
 * place and uncomments what to change. Rendered from the settings' one declaration, so that it cannot drift from
 * them: {@code ConfigTemplateTest} checks the shipped file against it.
 */
public final class ConfigTemplate {
    private static final int WIDTH = 110;

    private ConfigTemplate() {
    }

    public static String render() {
        StringBuilder out = new StringBuilder();
        out.append("""
                # Walden's settings: `walden serve --config walden.yaml` (bin/walden passes this file to `serve` when it is given
                # no --config). Every setting is listed, commented out, with its default: uncomment a line to change it (a key
                # left without a value is refused). Flags on the command line win over this file. Sizes take binary units
                # (64MiB, 4GiB), durations a unit (200ms, 60s, 12h, 7d): a plain number is refused, but for 0 and for the
                # settings that had an older -ms name (writer-delay...), where it is milliseconds. docs/operations.md,
                # "Configuration", says more about each (paths here are from the distribution's top directory, where docs/
                # is beside conf/).
                """);
        for (Setting<?> s : ServerSettings.ALL) {
            out.append('\n');
            for (String line : wrap(s.help(), WIDTH - 2)) {
                out.append("# ").append(line).append('\n');
            }
            String value = s.machineDefault() ? "" : s.defaultValue() == null ? "" : " " + quoted(s.defaultValue());
            out.append("#").append(s.machineDefault() ? " (the default depends on the machine)\n#" : "")
                    .append(' ').append(s.key()).append(':').append(value).append('\n');
        }
        out.append('\n');
        for (String line : wrap("Named logs, each with its own settings (any of " + String.join(", ", PerLogSettings.keys())
                + "), created at start if missing; a setting declared here changes only here (docs/operations.md, "
                + "\"Named logs\").", WIDTH - 2)) {
            out.append("# ").append(line).append('\n');
        }
        out.append("""
                # logs:
                #   orders: {retention-time: 7d, durability: local}
                #   audit: {}
                """);
        return out.toString();
    }

    /** A value YAML reads back as the same text (quoted when it holds characters YAML gives a meaning to). */
    private static String quoted(String value) {
        return value.matches("[A-Za-z0-9_./:@-]+") ? value : "'" + value.replace("'", "''") + "'";
    }

    /** Help text in lines of at most {@code width}, broken between words only (an address or a URI stays whole). */
    public static String[] wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.split(" ")) {
            if (line.length() > 0 && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            line.append(line.length() == 0 ? "" : " ").append(word);
        }
        lines.add(line.toString());
        return lines.toArray(new String[0]);
    }
}
