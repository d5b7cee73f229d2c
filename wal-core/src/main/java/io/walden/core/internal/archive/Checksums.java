package io.walden.core.internal.archive;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/** The checksums an archive compares: CRC-32C of an object's bytes, and MD5 (what S3 reports as a plain ETag). */
public final class Checksums {
    private static final int CHUNK = 1 << 20;

    /** The CRC-32C and the MD5 (lower-case hex) of the first {@code length} bytes of {@code file}. */
    public record Sums(long crc32c, String md5Hex, byte[] md5) {
    }

    private Checksums() {
    }

    public static Sums of(Path file, long length) throws IOException {
        CRC32C crc = new CRC32C();
        MessageDigest md5 = md5();
        ByteBuffer buf = ByteBuffer.allocate((int) Math.min(CHUNK, Math.max(1, length)));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            if (ch.size() < length) {
                throw new IOException(file + " holds " + ch.size() + " bytes, fewer than the " + length + " to archive");
            }
            long pos = 0;
            while (pos < length) {
                buf.clear().limit((int) Math.min(buf.capacity(), length - pos));
                int n = ch.read(buf, pos);
                if (n < 0) {
                    throw new IOException("unexpected end of " + file + " at " + pos);
                }
                buf.flip();
                crc.update(buf.duplicate());
                md5.update(buf);
                pos += n;
            }
        }
        byte[] digest = md5.digest();
        return new Sums(crc.getValue(), HexFormat.of().formatHex(digest), digest);
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has MD5", e);
        }
    }
}
