package io.walden.core.recovery;

import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import io.walden.core.Lsn;
import io.walden.core.WalCorruptedException;
import io.walden.core.segment.SegmentFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The epoch history file {@code walden.history} (docs/format.md, "Epoch history file"): one line per epoch,
 * {@code <number> <start LSN>}. Replaced whole and atomically (written to a temporary file, forced, renamed,
 * directory forced), so a crash leaves the old history or the new one, never a mix. A log without the file
 * has lived in epoch 1 only.
 */
public final class HistoryFile {
    public static final String NAME = "walden.history";
    private static final String HEADER = "# Walden epoch history (docs/format.md): epoch number, start LSN";

    private HistoryFile() {
    }

    /** @throws WalCorruptedException when the file exists but is not a valid history */
    public static EpochHistory read(Path dir) throws IOException {
        Path file = dir.resolve(NAME);
        if (!Files.exists(file)) {
            return EpochHistory.initial();
        }
        List<Epoch> epochs = new ArrayList<>();
        int lineNumber = 0;
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new WalCorruptedException(file + " is not UTF-8 text: it is not a Walden epoch history", Lsn.INVALID, file);
        }
        for (String line : lines) {
            lineNumber++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            String[] fields = l.split("\\s+");
            try {
                if (fields.length != 2) {
                    throw new IllegalArgumentException("expected two fields");
                }
                epochs.add(new Epoch(Integer.parseInt(fields[0]), Lsn.parse(fields[1])));
            } catch (IllegalArgumentException e) {
                throw new WalCorruptedException(file + " line " + lineNumber + " is not '<epoch> <start LSN>': '" + line
                        + "' (" + e.getMessage() + ")", Lsn.INVALID, file);
            }
        }
        try {
            return EpochHistory.of(epochs);
        } catch (IllegalArgumentException e) {
            throw new WalCorruptedException(file + " is not a valid epoch history: " + e.getMessage(), Lsn.INVALID, file);
        }
    }

    /** Replaces the history durably: when this returns, a crash cannot bring back the old one. */
    public static void write(Path dir, EpochHistory history) throws IOException {
        StringBuilder text = new StringBuilder(HEADER).append('\n');
        for (Epoch e : history.epochs()) {
            text.append(e.number()).append(' ').append(Lsn.format(e.startLsn())).append('\n');
        }
        SegmentFiles.replaceDurably(dir, NAME, text.toString().getBytes(StandardCharsets.UTF_8));
    }
}
