package io.walden.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The physical baseline every commit figure is read against: write a record's bytes to a preallocated
 * file with a positional {@code FileChannel} write, then {@code force(false)} (fdatasync). One committer
 * doing this back to back is the ceiling of durable commits per second for one thread on this disk.
 */
final class RawForceLoop {
    private RawForceLoop() {
    }

    /** A file of {@code size} bytes whose blocks are allocated (zeros written) and forced. */
    static FileChannel preallocated(Path file, long size) throws IOException {
        FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
        for (long pos = 0; pos < size; ) {
            zeros.clear();
            pos += ch.write(zeros, pos);
        }
        ch.force(true);
        return ch;
    }

    /** One commit: write the buffer at {@code position} (wrapping at the file's end) and fdatasync; returns the next position. */
    static long writeAndForce(FileChannel ch, ByteBuffer record, long position, long fileSize) throws IOException {
        if (position + record.capacity() > fileSize) {
            position = 0;
        }
        record.clear();
        while (record.hasRemaining()) {
            position += ch.write(record, position);
        }
        ch.force(false);
        return position;
    }
}
