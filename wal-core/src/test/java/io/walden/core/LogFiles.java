package io.walden.core;

import io.walden.core.internal.recovery.ControlFile;
import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** Direct manipulation of a closed log's files, to stage what a crash or a bad disk leaves behind. */
final class LogFiles {
    private final Path dir;
    private final long segmentSize;

    LogFiles(Path dir, long segmentSize) {
        this.dir = dir;
        this.segmentSize = segmentSize;
    }

    Path segmentOf(long lsn) {
        return SegmentFiles.path(dir, lsn & -segmentSize);
    }

    long offsetOf(long lsn) {
        return lsn & (segmentSize - 1);
    }

    void write(long lsn, byte[] bytes) {
        try (FileChannel ch = FileChannel.open(segmentOf(lsn), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), offsetOf(lsn));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    byte[] read(long lsn, int length) {
        try (FileChannel ch = FileChannel.open(segmentOf(lsn), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            ch.read(b, offsetOf(lsn));
            return b.array();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void flipBit(long lsn, int bit) {
        byte[] b = read(lsn, 1);
        b[0] ^= (byte) (1 << bit);
        write(lsn, b);
    }

    void zero(long fromLsn, int length) {
        write(fromLsn, new byte[length]);
    }

    /** Keeps a copy of the control file as it is now; {@link #restoreControl()} puts it back (a crash before the next checkpoint). */
    void snapshotControl() {
        copy(dir.resolve(ControlFile.NAME), dir.resolve("control.snapshot"));
    }

    void restoreControl() {
        copy(dir.resolve("control.snapshot"), dir.resolve(ControlFile.NAME));
    }

    void deleteControl() {
        try {
            Files.delete(dir.resolve(ControlFile.NAME));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void copy(Path from, Path to) {
        try {
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
