package io.walden.server;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI document passes a standard linter: Redocly CLI's {@code lint} with its recommended rules, no error and
 * no warning. It runs through {@code npx} (Node.js and npm, which {@code .ci/run} installs), at a pinned version
 * fetched from the npm registry on first use.
 */
class OpenApiLintIT {
    /** The Redocly CLI release the document was last linted with; raise it deliberately, never implicitly. */
    static final String REDOCLY = "@redocly/cli@2.77.0";
    private static final Path DOCUMENT = Path.of("src/main/resources/io/walden/server/http/openapi.json");

    @TempDir
    Path work;

    @Test
    void theDocumentPassesRedoclysRecommendedRules() throws Exception {
        Path npx = Path.of("/usr/bin/npx");
        Assumptions.assumeTrue(Files.isExecutable(npx),
                "npx is not installed (apt-get install npm; .ci/run installs it): the document is not linted here");
        Path output = work.resolve("lint.out");
        Process p = new ProcessBuilder(npx.toString(), "--yes", REDOCLY, "lint", "--format=stylish",
                DOCUMENT.toAbsolutePath().toString())
                .directory(work.toFile()).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("redocly lint did not finish in 5 minutes:\n" + Files.readString(output));
        }
        String report = Files.readString(output);
        assertThat(p.exitValue()).as(report).isZero();
        assertThat(report).contains("Your API description is valid")
                .as("no warnings either").doesNotContainPattern("You have \\d+ warning");
    }
}
