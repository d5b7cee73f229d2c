package io.walden.core.readme;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the README promises an application that embeds wal-core: its example is this build's {@link Example}, word for
 * word, and runs (twice over the same log, as a restarted application would); and the application gets the Chronicle
 * versions Walden is tested with.
 */
class ReadmeExampleTest {
    @TempDir
    Path work;

    private static final Path README = Path.of("..", "README.md");
    private static final Path SOURCE = Path.of("src", "test", "java", "io", "walden", "core", "readme", "Example.java");

    @Test
    void theReadmesExampleIsTheSourceThisBuildCompiles() throws IOException {
        Matcher java = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(README));
        assertThat(java.find()).as("a java block in the README").isTrue();
        String source = Files.readString(SOURCE);
        String withoutPackage = source.substring(source.indexOf('\n') + 1).stripLeading();
        assertThat(java.group(1)).isEqualTo(withoutPackage);
    }

    @Test
    void theReadmesExampleRunsAndRunsAgainOnTheLogItLeft() {
        String dir = work.resolve("data").resolve("wal").toString();
        Example.main(new String[]{dir});
        Example.main(new String[]{dir}); // the cursor exists now, the log holds the first run's records
    }

    /** {@code mvn install -DskipTests} (the README's set-up) skips the integration tests too: failsafe 3 needs telling. */
    @Test
    void skippingTheTestsSkipsTheIntegrationTestsToo() throws IOException {
        String parent = Files.readString(Path.of("..", "pom.xml"));
        String failsafe = parent.substring(parent.indexOf("<artifactId>maven-failsafe-plugin</artifactId>"));
        failsafe = failsafe.substring(0, failsafe.indexOf("</plugin>"));
        assertThat(failsafe).contains("<skipTests>${skipTests}</skipTests>");
    }

    @Test
    void everyChronicleArtifactWaldenRunsWithIsDeclaredByWalCoreSoThatItsUsersGetTheTestedVersion() throws IOException {
        String pom = Files.readString(Path.of("pom.xml"));
        String dependencies = pom.substring(pom.indexOf("<dependencies>"), pom.indexOf("</dependencies>"));
        List<String> undeclared = new ArrayList<>();
        int chronicle = 0;
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (String entry : classPath.split(File.pathSeparator)) {
            Matcher m = Pattern.compile(".*/net/openhft/([^/]+)/([^/]+)/[^/]+\\.jar$").matcher(entry.replace('\\', '/'));
            if (m.matches()) {
                chronicle++;
                if (!dependencies.contains("<artifactId>" + m.group(1) + "</artifactId>")) {
                    undeclared.add(m.group(1) + ":" + m.group(2));
                }
            }
        }
        assertThat(chronicle).as("Chronicle jars on the class path").isGreaterThanOrEqualTo(3);
        assertThat(undeclared).as("Chronicle artifacts on the tested class path that only come transitively "
                + "(a user's build would pick their version from chronicle-bytes' pom, not ours)").isEmpty();
    }
}
