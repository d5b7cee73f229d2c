package io.walden.core;

import io.walden.core.internal.journal.StoreJournal;
import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/** A closed store's journal as the tests see it: what it covers of each log, and a crash that loses exactly that. */
final class StoreJournalFiles {
    private StoreJournalFiles() {
    }

    /**
     * Overwrites with garbage every byte of the logs' segment files that an entry of the store's journal covers: what
     * a power loss can take from pages the logs wrote but no checkpoint forced. The store must be closed (or its
     * process killed).
     *
     * @return how many bytes were spoilt
     */
    static long spoilWhatTheJournalCovers(Path store) throws IOException {
        Map<Long, Path> dirs = new HashMap<>();
        try (Stream<Path> logs = Files.list(store.resolve(WalStore.LOGS))) {
            for (Path d : (Iterable<Path>) logs::iterator) {
                Path key = d.resolve(StoreJournal.KEY_FILE);
                if (Files.exists(key)) {
                    dirs.put(ByteBuffer.wrap(Files.readAllBytes(key)).order(ByteOrder.LITTLE_ENDIAN).getLong(), d);
                }
            }
        }
        long spoilt = 0;
        Path journalDir = store.resolve(StoreJournal.DIRECTORY);
        try (Wal journal = Wal.open(WalConfig.builder(journalDir).segmentSize(Wal.segmentSizeOf(journalDir).orElseThrow()).build());
             WalReader r = journal.reader(journal.oldestLsn())) {
            for (WalRecord rec; (rec = r.next()) != null; ) {
                ByteBuffer b = rec.payloadView().order(ByteOrder.LITTLE_ENDIAN);
                Path dir = dirs.get(b.getLong(b.position()));
                if (rec.type() != StoreJournal.WRITE || dir == null) {
                    continue;
                }
                long lsn = b.getLong(b.position() + 8);
                int length = b.remaining() - StoreJournal.HEADER;
                long segmentSize = Wal.segmentSizeOf(dir).orElseThrow();
                long start = lsn & -segmentSize;
                Path file = SegmentFiles.path(dir, start);
                if (!Files.exists(file)) {
                    continue;
                }
                byte[] garbage = new byte[length];
                Arrays.fill(garbage, (byte) 0xA5);
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    ByteBuffer g = ByteBuffer.wrap(garbage);
                    for (long at = lsn - start; g.hasRemaining(); ) {
                        at += ch.write(g, at);
                    }
                }
                spoilt += length;
            }
        }
        return spoilt;
    }
}
