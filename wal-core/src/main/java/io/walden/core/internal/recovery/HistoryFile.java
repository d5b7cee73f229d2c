package io.walden.core.internal.recovery;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The epoch history file {@code walden.history} (docs/format.md, "Epoch history file"): one line per epoch,
 * {@code <number> <start LSN>}, the last one followed by {@code begun-here} when this log began its current epoch
 * itself (a promotion, or a primary's new epoch after a crash) rather than adopting it from a primary. Replaced whole
 * and atomically (written to a temporary file, forced, renamed, directory forced), so a crash leaves the old history
 * or the new one, never a mix. A log without the file has lived in epoch 1 only.
 *
 * <p>Why the mark lives here: a promotion lifts the log's read limit, and the control file records that only at the
 * next checkpoint. The history is written durably before the new epoch's first append, so it is what an open after a
 * crash trusts: a log that began its current epoch is a primary's, and no read limit of its replica days applies.
 */
public final class HistoryFile {
    public static final String NAME = "walden.history";
    private static final String HEADER = "# Walden epoch history (docs/format.md): epoch number, start LSN"
            + " [begun-here: this log began the epoch]";
    /** The third field of the last line: this log began its current epoch (it was promoted, or began it after a crash). */
    public static final String BEGUN_HERE = "begun-here";

    /**
     * What the file holds.
     *
     * @param begunHere whether this log began the history's current epoch itself (see the class comment)
     */
    public record Stored(EpochHistory history, boolean begunHere) {
    }

    private HistoryFile() {
    }

    /** The history alone (see {@link #readStored}). */
    public static EpochHistory read(Path dir) throws IOException {
        return readStored(dir).history();
    }

    /** @throws WalCorruptedException when the file exists but is not a valid history */
    public static Stored readStored(Path dir) throws IOException {
        Path file = dir.resolve(NAME);
        if (!Files.exists(file)) {
            return new Stored(EpochHistory.initial(), false);
        }
        return parse(Files.readAllBytes(file), file.toString(), file);
    }

    /**
     * The history in {@code text} (the file's format, as the archive keeps it too: docs/format.md, "Archive").
     *
     * @param source what to name in an error (the file, or the archived object)
     * @throws WalCorruptedException when the text is not a valid history
     */
    public static Stored parse(byte[] text, String source, Path file) {
        String decoded;
        try {
            decoded = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(text)).toString();
        } catch (CharacterCodingException e) {
            throw new WalCorruptedException(source + " is not UTF-8 text: it is not a Walden epoch history", Lsn.INVALID, file);
        }
        boolean begunHere = false;
        List<Epoch> epochs = new ArrayList<>();
        int lineNumber = 0;
        for (String line : decoded.split("\\R", -1)) {
            lineNumber++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            String[] fields = l.split("\\s+");
            try {
                if (begunHere) {
                    throw new IllegalArgumentException("only the last epoch can be marked " + BEGUN_HERE);
                }
                if (fields.length == 3 && fields[2].equals(BEGUN_HERE)) {
                    begunHere = true;
                } else if (fields.length != 2) {
                    throw new IllegalArgumentException("expected two fields, or three with " + BEGUN_HERE + " last");
                }
                epochs.add(new Epoch(Integer.parseInt(fields[0]), Lsn.parse(fields[1])));
            } catch (IllegalArgumentException e) {
                throw new WalCorruptedException(source + " line " + lineNumber + " is not '<epoch> <start LSN> ["
                        + BEGUN_HERE + "]': '" + line + "' (" + e.getMessage() + ")", Lsn.INVALID, file);
            }
        }
        try {
            return new Stored(EpochHistory.of(epochs), begunHere);
        } catch (IllegalArgumentException e) {
            throw new WalCorruptedException(source + " is not a valid epoch history: " + e.getMessage(), Lsn.INVALID, file);
        }
    }

    /** Replaces the history durably with one adopted from a primary (see {@link #write(Path, EpochHistory, boolean)}). */
    public static void write(Path dir, EpochHistory history) throws IOException {
        write(dir, history, false);
    }

    /**
     * Replaces the history durably: when this returns, a crash cannot bring back the old one.
     *
     * @param begunHere whether this log began the history's current epoch itself
     */
    public static void write(Path dir, EpochHistory history, boolean begunHere) throws IOException {
        SegmentFiles.replaceDurably(dir, NAME, format(history, begunHere));
    }

    /** The file's bytes for {@code history}. */
    public static byte[] format(EpochHistory history, boolean begunHere) {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        List<Epoch> epochs = history.epochs();
        for (int i = 0; i < epochs.size(); i++) {
            Epoch e = epochs.get(i);
            text.append(e.number()).append(' ').append(Lsn.format(e.startLsn()));
            if (begunHere && i == epochs.size() - 1) {
                text.append(' ').append(BEGUN_HERE);
            }
            text.append('\n');
        }
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }
}
