package io.walden.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/** Scratch directories for benchmark runs, on the file system given by {@code -Dwalden.bench.dir} (default: target). */
final class BenchFiles {
    static final String JVM_FLAGS_1 = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
    static final String JVM_FLAGS_2 = "--add-opens=java.base/java.nio=ALL-UNNAMED";
    static final String JVM_FLAGS_3 = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
    static final String JVM_FLAGS_4 = "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED";
    static final String JVM_FLAGS_5 = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    static final String JVM_FLAGS_6 = "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED";
    static final String JVM_FLAGS_7 = "-Dchronicle.analytics.disable=true";
    static final String JVM_FLAGS_8 = "-Dchronicle.announcer.disable=true";

    private BenchFiles() {
    }

    static Path newDir(String name) {
        try {
            Path base = Path.of(System.getProperty("walden.bench.dir", "target/bench-data"));
            Files.createDirectories(base);
            return Files.createTempDirectory(base, name + "-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.delete(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
