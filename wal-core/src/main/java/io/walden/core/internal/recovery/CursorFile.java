package io.walden.core.internal.recovery;

import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The cursor files (docs/format.md, "Cursor files"): the cursors as of an LSN, so that opening a log need not read
 * control records from its start. Text, UTF-8:
 *
 * <pre>
 *   # Walden cursors (docs/format.md)
 *   as-of 0/1A2B40
 *   cursor orders-projection 0/1A0000
 *   crc 1a2b3c4d
 * </pre>
 *
 * The last line is the CRC-32C of every byte before it. Replaced whole and atomically, like the history file.
 *
 * <p>Thread-safety: stateless.
 */
public final class CursorFile {
    /** The cursors as of the oldest kept LSN, written before every truncation: control records below it are gone. */
    public static final String BASE = "walden.cursors";
    /** The cursors as of a recent flushed LSN (rewritten when they change) or of the end at a clean close. */
    public static final String CHECKPOINT = "walden.cursors.checkpoint";
    private static final String HEADER = "# Walden cursors (docs/format.md)";

    /** Every cursor reflected by the control records below {@code asOf}. */
    public record Snapshot(long asOf, Map<String, Long> cursors) {
    }

    private CursorFile() {
    }

    /** @return the snapshot in {@code dir}'s {@code name} file, or null when there is none */
    public static Snapshot read(Path dir, String name) throws IOException {
        Path file = dir.resolve(name);
        if (!Files.exists(file)) {
            return null;
        }
        String text = Files.readString(file, StandardCharsets.UTF_8);
        int crcLine = text.lastIndexOf("crc ");
        try {
            if (crcLine < 0 || crc(text.substring(0, crcLine)) != Long.parseLong(text.substring(crcLine + 4).trim(), 16)) {
                throw new IllegalArgumentException("its CRC-32C does not match");
            }
            long asOf = -1;
            Map<String, Long> cursors = new TreeMap<>();
            for (String line : text.substring(0, crcLine).split("\n")) {
                String[] f = line.trim().split(" ");
                if (f[0].equals("as-of") && f.length == 2) {
                    asOf = Lsn.parse(f[1]);
                } else if (f[0].equals("cursor") && f.length == 3) {
                    cursors.put(f[1], Lsn.parse(f[2]));
                } else if (!line.isBlank() && !line.startsWith("#")) {
                    throw new IllegalArgumentException("unreadable line '" + line + "'");
                }
            }
            if (asOf < 0) {
                throw new IllegalArgumentException("no as-of line");
            }
            return new Snapshot(asOf, cursors);
        } catch (IllegalArgumentException e) {
            throw new WalCorruptedException(file + " is not a valid cursor file: " + e.getMessage(), Lsn.INVALID, file);
        }
    }

    /** Replaces {@code name} durably: when this returns, a crash cannot bring back the old one. */
    public static void write(Path dir, String name, Snapshot snapshot) throws IOException {
        StringBuilder text = new StringBuilder(HEADER).append('\n').append("as-of ").append(Lsn.format(snapshot.asOf())).append('\n');
        snapshot.cursors().forEach((cursor, lsn) -> text.append("cursor ").append(cursor).append(' ').append(Lsn.format(lsn)).append('\n'));
        long crc = crc(text.toString()); // of every byte before the crc line
        text.append("crc ").append(Long.toHexString(crc)).append('\n');
        SegmentFiles.replaceDurably(dir, name, text.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Removes {@code name} (a checkpoint that a rewind made stale); a crash before it is gone leaves it for the next open to judge. */
    public static void delete(Path dir, String name) throws IOException {
        if (Files.deleteIfExists(dir.resolve(name))) {
            SegmentFiles.forceDirectory(dir);
        }
    }

    private static long crc(String text) {
        CRC32C crc = new CRC32C();
        crc.update(text.getBytes(StandardCharsets.UTF_8));
        return crc.getValue();
    }
}
