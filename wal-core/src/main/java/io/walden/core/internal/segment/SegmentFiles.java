package io.walden.core.internal.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * Names and whole-file operations on segment files. A segment is named by the LSN of its first byte as
 * 16 upper-case hex digits plus {@code .wal} (so names sort in LSN order); a file being prepared carries
 * {@code .tmp} and never counts as a segment; a spare kept for recycling carries {@code .spare}.
 *
 * <p>Every create, rename and delete is followed by a force of the directory: a forced file whose
 * directory entry was never forced can vanish in a crash (Kafka's KAFKA-3968).
 *
 * <p>Thread-safety: stateless; callers serialise operations on the same file.
 */
public final class SegmentFiles {
    public static final String SUFFIX = ".wal";
    public static final String TEMP_SUFFIX = ".tmp";
    public static final String SPARE_SUFFIX = ".spare";
    /** A removed segment's file awaiting disposal (its mapping may still be in use); never part of the log, deleted at
     *  open. The on-disk suffix keeps its old name, ".retired" (docs/format.md). */
    public static final String REMOVED_SUFFIX = ".retired";
    /**
     * How much of a segment one write of its zeros covers. Not more than 64 KiB, because the page cache keeps the pages
     * a write brings in together as one "folio" of about that write's size (Linux 6.x, ext4 with large folios), and
     * every later small write into a folio walks all of the folio's block buffers (ext4_block_write_begin,
     * block_commit_write): after 1 MiB writes of zeros, a 100-byte append cost 2.1-3.5 us of kernel time instead of
     * 0.85 us, and a server appending to 64 named logs spent 15 % of its CPU in that walk. At 64 KiB a segment is
     * prepared as fast as with 1 MiB writes (50-56 ms for 64 MiB here) and an append walks 16 buffers.
     */
    private static final int ZERO_CHUNK = 64 << 10;
    /**
     * The zeros every segment is filled with, allocated once per process: each write takes a {@link ByteBuffer#duplicate()}
     * (its own position), and nothing writes into it (read-only). A buffer per preparation cost direct memory each
     * time, zeroed, then held until a collection: a store creating a thousand logs made two thousand of them (a first
     * segment and a spare each), and the JDK collects to free such buffers only once its direct memory limit is
     * reached.
     */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(ZERO_CHUNK).asReadOnlyBuffer();

    private SegmentFiles() {
    }

    public static String name(long startLsn) {
        return String.format(Locale.ROOT, "%016X", startLsn) + SUFFIX;
    }

    public static Path path(Path dir, long startLsn) {
        return dir.resolve(name(startLsn));
    }

    /** The start LSN a segment file name encodes, or -1 when the name is not a segment's. */
    public static long parseName(String fileName) {
        if (fileName.length() != 16 + SUFFIX.length() || !fileName.endsWith(SUFFIX)) {
            return -1;
        }
        try {
            return Long.parseUnsignedLong(fileName.substring(0, 16), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Bytes the segment files in {@code dir} take: the segments (the one prepared ahead among them), spares kept for
     * recycling and removed segments awaiting disposal, each at its length (every one is allocated whole, zeros
     * included). A file that goes while the directory is read is not counted.
     */
    public static long bytesOnDisk(Path dir) throws IOException {
        long total = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*{" + SUFFIX + "," + SPARE_SUFFIX + ","
                + REMOVED_SUFFIX + "}")) {
            for (Path f : files) {
                try {
                    total += Files.size(f);
                } catch (NoSuchFileException gone) {
                    // recycled or disposed of meanwhile: its bytes are counted under its next name, or are free
                }
            }
        }
        return total;
    }

    /** Start LSNs of the segment files in {@code dir}, ascending. */
    public static List<Long> list(Path dir) throws IOException {
        List<Long> starts = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + SUFFIX)) {
            for (Path f : files) {
                long start = parseName(f.getFileName().toString());
                if (start >= 0) {
                    starts.add(start);
                }
            }
        }
        Collections.sort(starts);
        return starts;
    }

    /** Files with the given suffix (temporary files of an interrupted preparation, spares). */
    public static List<Path> listWithSuffix(Path dir, String suffix) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + suffix)) {
            files.forEach(out::add);
        }
        Collections.sort(out);
        return out;
    }

    /**
     * Creates a fully allocated segment: zeros are written (not a sparse setLength), the header put in
     * place, the data forced, and only then the file renamed to its final name and the directory forced.
     * A full disk surfaces here as an IOException, never later as a fault inside a mapped store.
     *
     * @param reuse an existing file to recycle instead of creating one (its contents are overwritten
     *              with zeros: a recycled segment is never assumed clean), or null
     */
    public static Path prepare(Path dir, long segmentSize, long startLsn, long logId, Path reuse) throws IOException {
        Path temp = dir.resolve(name(startLsn) + TEMP_SUFFIX);
        if (reuse != null) {
            Files.move(reuse, temp, StandardCopyOption.ATOMIC_MOVE);
        }
        try (FileChannel ch = UninterruptibleChannels.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            writeZeros(ch, 0, segmentSize);
            if (ch.size() > segmentSize) {
                ch.truncate(segmentSize);
            }
            ch.write(SegmentHeaderDescriptor.encode(segmentSize, startLsn, logId), 0);
            ch.force(true);
        } catch (IOException e) {
            Files.deleteIfExists(temp);
            forceDirectory(dir);
            throw new IOException("could not prepare segment " + name(startLsn) + " in " + dir + ": " + e.getMessage(), e);
        }
        Path target = path(dir, startLsn);
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory(dir);
        return target;
    }

    /** Writes zeros over {@code [from, to)} with positional writes (allocating the blocks if needed). */
    public static void writeZeros(FileChannel ch, long from, long to) throws IOException {
        ByteBuffer zeros = ZEROS.duplicate();
        long pos = from;
        while (pos < to) {
            zeros.clear().limit((int) Math.min(zeros.capacity(), to - pos));
            while (zeros.hasRemaining()) {
                pos += ch.write(zeros, pos);
            }
        }
    }

    /** Renames {@code from} to {@code to} atomically and forces the directory. */
    public static void rename(Path dir, Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        forceDirectory(dir);
    }

    /**
     * Replaces {@code dir/name} whole and durably: writes a temporary file, forces it, renames it over the old one,
     * forces the directory. A crash leaves the old contents or the new, never a mix (the history and slot files).
     */
    public static void replaceDurably(Path dir, String name, byte[] contents) throws IOException {
        Path temp = dir.resolve(name + TEMP_SUFFIX);
        try (FileChannel ch = UninterruptibleChannels.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer bytes = ByteBuffer.wrap(contents);
            while (bytes.hasRemaining()) {
                ch.write(bytes);
            }
            ch.force(true);
        }
        Files.move(temp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory(dir);
    }

    /** Deletes a file and forces the directory. */
    public static void delete(Path dir, Path file) throws IOException {
        Files.deleteIfExists(file);
        forceDirectory(dir);
    }

    /**
     * Forces a directory's entries (fsync on the directory's file descriptor). Linux allows opening a
     * directory for reading and forcing it; where the platform refuses, there is nothing more to do.
     */
    public static void forceDirectory(Path dir) throws IOException {
        try (FileChannel ch = UninterruptibleChannels.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("win")) {
                return; // Windows cannot open a directory as a file; NTFS journals the entry itself.
            }
            throw e;
        }
    }
}
