package io.walden.core.archive;

import io.walden.core.internal.archive.Checksums;
import io.walden.core.internal.segment.SegmentFiles;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An archive in a directory ({@code file:///dir}): a mounted NFS share, a second disk, a test. An object is copied to
 * {@code name.tmp}, forced, read back and compared (CRC-32C), renamed into place and the directory forced, so a crash
 * leaves either the old object or the new one, and a {@code .tmp} that the next put replaces.
 *
 * <p>Thread-safety: safe for concurrent calls on distinct names.
 */
public final class FileArchiveTarget implements ArchiveTarget {
    private static final String TEMP = ".tmp";
    private final Path dir;
    private final String uri;

    public FileArchiveTarget(Path dir) throws IOException {
        this(dir.toAbsolutePath(), false);
        Files.createDirectories(this.dir);
    }

    /** A target in {@code absolute}, made at its first put unless made already (see {@link #under}). */
    private FileArchiveTarget(Path absolute, boolean unused) {
        this.dir = absolute;
        this.uri = absolute.toUri().toString();
    }

    @Override
    public String uri() {
        return uri;
    }

    @Override
    public void put(String name, Path file, long length) throws IOException {
        Files.createDirectories(dir); // a target reached through under() is made by its first object
        Path temp = dir.resolve(name + TEMP);
        Path dest = dir.resolve(name);
        Checksums.Sums local = Checksums.of(file, length);
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ);
             FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.TRUNCATE_EXISTING)) {
            long pos = 0;
            while (pos < length) {
                pos += in.transferTo(pos, length - pos, out);
            }
            out.force(true);
        }
        Checksums.Sums stored = Checksums.of(temp, length);
        if (Files.size(temp) != length || stored.crc32c() != local.crc32c()) {
            Files.deleteIfExists(temp);
            throw new IOException("archived copy of " + name + " does not verify: CRC-32C " + Long.toHexString(stored.crc32c())
                    + " stored, " + Long.toHexString(local.crc32c()) + " local");
        }
        Files.move(temp, dest, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        SegmentFiles.forceDirectory(dir);
    }

    @Override
    public boolean get(String name, Path dest) throws IOException {
        Path src = dir.resolve(name);
        if (!Files.exists(src)) {
            return false;
        }
        Files.copy(src, dest, StandardCopyOption.REPLACE_EXISTING);
        return true;
    }

    @Override
    public List<StoredObject> list() throws IOException {
        List<StoredObject> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out; // under() a prefix nothing was put in yet
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path p : files) {
                String name = p.getFileName().toString();
                if (!name.endsWith(TEMP) && Files.isRegularFile(p)) {
                    out.add(new StoredObject(name, Files.size(p)));
                }
            }
        }
        return out;
    }

    @Override
    public ArchiveTarget under(String prefix) {
        return new FileArchiveTarget(dir.resolve(ArchiveTarget.checkPrefix(prefix)), false);
    }

    @Override
    public List<String> prefixes() throws IOException {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, Files::isDirectory)) {
            for (Path p : entries) {
                out.add(p.getFileName().toString());
            }
        }
        Collections.sort(out);
        return out;
    }

    @Override
    public void delete(String name) throws IOException {
        Files.deleteIfExists(dir.resolve(name));
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return uri;
    }
}
