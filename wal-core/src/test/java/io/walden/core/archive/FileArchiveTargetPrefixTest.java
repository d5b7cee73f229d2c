package io.walden.core.archive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A directory archive's targets under a prefix (another log's archive, {@code <dir>/logs/orders/}): apart from the
 * directory's own objects, made by their first object, listed by {@link ArchiveTarget#prefixes}. Milliseconds.
 */
class FileArchiveTargetPrefixTest {
    @TempDir
    Path dir;

    @Test
    void aTargetUnderAPrefixIsASubdirectoryMadeByItsFirstObject() throws Exception {
        Path file = Files.write(dir.resolve("f"), new byte[100]);
        Path archive = dir.resolve("archive");
        try (ArchiveTarget root = new FileArchiveTarget(archive)) {
            root.put("a.wal", file, 10);
            ArchiveTarget orders = root.under("logs/orders/");
            assertThat(archive.resolve("logs")).doesNotExist();
            assertThat(orders.list()).isEmpty();
            assertThat(root.under("logs/").prefixes()).isEmpty();
            orders.put("b.wal", file, 20);
            root.under("logs/audit/").put("c.wal", file, 30);
            assertThat(archive.resolve("logs/orders/b.wal")).hasSize(20);
            assertThat(root.list()).containsExactly(new ArchiveTarget.StoredObject("a.wal", 10));
            assertThat(root.under("logs/").prefixes()).containsExactly("audit", "orders");
            assertThat(orders.list()).containsExactly(new ArchiveTarget.StoredObject("b.wal", 20));
            assertThat(ArchiveTargets.openExisting(archive.resolve("logs/orders").toUri().toString(), null).list())
                    .containsExactly(new ArchiveTarget.StoredObject("b.wal", 20));
        }
    }

    @Test
    void aPrefixIsNamesEachFollowedByASlash() throws Exception {
        try (ArchiveTarget root = new FileArchiveTarget(dir)) {
            for (String bad : new String[] {"logs", "/logs/", "logs//x/", "../x/", "logs/../../x/", "./x/", ""}) {
                assertThatThrownBy(() -> root.under(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("archive prefix");
            }
        }
    }
}
