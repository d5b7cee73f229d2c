package io.walden.replication.primary;

import io.walden.core.Lsn;
import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Persistent replication slots, {@code walden.slots} in the log directory (docs/format.md, "Replication slots
 * file"): one line per slot, {@code <replica name> <LSN it still needs>}. Replaced whole and atomically (temporary
 * file, force, rename, directory force). Saved after slots change, at most once a second, and at close: a slot
 * read back after a crash may be a little behind, which only keeps a little more log.
 */
final class SlotFile {
    static final String NAME = "walden.slots";
    private static final Logger LOG = LoggerFactory.getLogger(SlotFile.class);
    private static final String HEADER = "# Walden replication slots (docs/format.md): replica name, LSN it still needs";

    private SlotFile() {
    }

    /** The saved slots, or none when there is no file; a malformed line is skipped with a warning (losing a slot only risks that replica's rebuild). */
    static Map<String, Long> read(Path dir) {
        Map<String, Long> slots = new TreeMap<>();
        Path file = dir.resolve(NAME);
        if (!Files.exists(file)) {
            return slots;
        }
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String l = line.strip();
                if (l.isEmpty() || l.startsWith("#")) {
                    continue;
                }
                int space = l.lastIndexOf(' ');
                try {
                    if (space <= 0) {
                        throw new IllegalArgumentException("expected '<name> <LSN>'");
                    }
                    slots.put(l.substring(0, space).strip(), Lsn.parse(l.substring(space + 1)));
                } catch (IllegalArgumentException e) {
                    LOG.warn("Ignoring a malformed line of {}: '{}' ({})", file, line, e.getMessage());
                }
            }
        } catch (IOException e) {
            LOG.warn("Cannot read the replication slots in {}: {}; starting without them", file, e.toString());
        }
        return slots;
    }

    /** Replaces the saved slots durably. */
    static void write(Path dir, Map<String, Long> slots) throws IOException {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        new TreeMap<>(slots).forEach((name, lsn) -> text.append(name).append(' ').append(Lsn.format(lsn)).append('\n'));
        SegmentFiles.replaceDurably(dir, NAME, text.toString().getBytes(StandardCharsets.UTF_8));
    }
}
