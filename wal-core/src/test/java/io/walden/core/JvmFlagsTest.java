package io.walden.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** An application that embeds Walden without the JVM flags it needs is told which, by Walden, before anything maps. */
class JvmFlagsTest {
    @TempDir
    Path work;

    @Test
    void openingWithoutTheFlagsFailsWithAWaldenMessageNamingThemNotChroniclesAssertionError() throws Exception {
        try (ChildJvm child = ChildJvm.start(List.of("-Dchronicle.analytics.disable=true"), OpenWithoutFlags.class,
                work.resolve("child.err"), work.resolve("log").toString())) {
            assertThat(child.waitFor(60, TimeUnit.SECONDS)).isZero();
            assertThat(child.lines()).singleElement().asString()
                    .startsWith("REFUSED " + WalException.class.getName())
                    .contains("--add-opens=java.base/java.lang.reflect=ALL-UNNAMED")
                    .contains("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED")
                    .doesNotContain("AssertionError");
        }
        assertThat(work.resolve("log")).as("nothing created").doesNotExist();
    }
}
