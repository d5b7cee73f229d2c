package io.walden.server;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The status page's script (admin/status.html) declares each function once: a second declaration silently replaces the
 * first everywhere on the page, so the page would not do what the first one's readers expect.
 */
class StatusPageScriptTest {
    @Test
    void everyFunctionOfThePageIsDeclaredOnce() throws Exception {
        String page;
        try (InputStream in = StatusPageScriptTest.class.getResourceAsStream("/io/walden/server/admin/status.html")) {
            assertThat(in).as("status.html on the class path").isNotNull();
            page = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> names = new ArrayList<>();
        Matcher m = Pattern.compile("\\bfunction\\s+([A-Za-z_$][\\w$]*)\\s*\\(").matcher(page);
        while (m.find()) {
            names.add(m.group(1));
        }
        assertThat(names).as("the functions the page declares").isNotEmpty().doesNotHaveDuplicates();
    }
}
