package io.walden.server;

import com.github.javaparser.JavaParser;
import com.github.javaparser.ParseResult;
import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.ast.CompilationUnit;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The house rule on size: no class over about 400 lines of code, split by job past that. Counted on code only: comments
 * and blank lines do not count, so that an explanation is never shortened to make a class fit. Checked on the main
 * sources of every module (this module's tests run from wal-server, beside the others).
 */
class ClassSizeTest {
    private static final int MAX_CODE_LINES = 400;
    private static final List<String> MODULES = List.of("wal-core", "wal-replication", "wal-server", "wal-bench");

    /** The lines that hold a token other than white space or a comment (a text block counts every line it spans). */
    static int codeLines(String source) {
        ParseResult<CompilationUnit> parsed = new JavaParser(new ParserConfiguration()
                .setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_17)).parse(source);
        assertThat(parsed.isSuccessful()).as("parsed: %s", parsed.getProblems()).isTrue();
        Set<Integer> lines = new HashSet<>();
        parsed.getResult().orElseThrow().getTokenRange().orElseThrow().forEach(token -> {
            if (!token.getCategory().isWhitespaceOrComment()) {
                token.getRange().ifPresent(r -> {
                    for (int line = r.begin.line; line <= r.end.line; line++) {
                        lines.add(line);
                    }
                });
            }
        });
        return lines.size();
    }

    @Test
    void commentsAndBlankLinesAreNotCounted() {
        String source = """
                package p;

                /**
                 * A class whose explanation is longer than its code.
                 */
                final class A {
                    // why the field is there
                    int x; /* and how it is read */

                    /** Its one method. */
                    int x() {
                        return x;
                    }
                }
                """;
        assertThat(codeLines(source)).isEqualTo(7);
    }

    @Test
    void noClassHoldsMoreThanAboutFourHundredLinesOfCode() throws Exception {
        List<String> over = new ArrayList<>();
        int checked = 0;
        for (String module : MODULES) {
            try (Stream<Path> files = Files.walk(Path.of("..", module, "src", "main", "java"))) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    int lines = codeLines(Files.readString(file));
                    if (lines > MAX_CODE_LINES) {
                        over.add(file + ": " + lines + " lines of code");
                    }
                    checked++;
                }
            }
        }
        assertThat(checked).as("main source files found").isGreaterThan(100);
        assertThat(over).as("split by job past %d lines of code", MAX_CODE_LINES).isEmpty();
    }
}
