package io.walden.replication.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.walden.core.Epoch;
import io.walden.core.EpochHistory;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads {@link Frame}s (docs/replication-protocol.md): the length prefix bounds every frame before anything is
 * buffered, then the body is checked field by field. Anything malformed raises a
 * {@link CorruptedFrameException} naming what was wrong (a frame over the limit: {@link TooLongFrameException});
 * the pipeline's last handler logs it and closes the connection (the protocol never resynchronises, and after the
 * first error every further byte is dropped). One instance per channel.
 *
 * <p>The limit can change while the connection runs ({@link #maxFrameLength(int)}, on the channel's event loop):
 * a connection starts with a small one, for the handshake's frames, so an unauthenticated peer cannot make this
 * side buffer a large frame; once the handshake is done, a replica raises it to what the log's records need.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    private int maxFrameLength;
    private boolean failed;

    public FrameDecoder() {
        this(FrameDescriptor.DEFAULT_MAX_FRAME_LENGTH);
    }

    /** @param maxFrameLength the largest frame accepted, counting the type byte and the body */
    public FrameDecoder(int maxFrameLength) {
        maxFrameLength(maxFrameLength);
    }

    /** Sets the largest frame accepted from now on (counting the type byte and the body). Event loop only. */
    public void maxFrameLength(int length) {
        if (length < 1) {
            throw new IllegalArgumentException("a frame limit is at least 1 byte, got " + length);
        }
        this.maxFrameLength = length;
    }

    public int maxFrameLength() {
        return maxFrameLength;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes()); // the connection is being closed: nothing after an error is read
            return;
        }
        if (in.readableBytes() < FrameDescriptor.LENGTH_FIELD_LENGTH) {
            return;
        }
        long length = in.getUnsignedInt(in.readerIndex());
        if (length > maxFrameLength) {
            failed = true;
            throw new TooLongFrameException("frame of " + length + " bytes is longer than the " + maxFrameLength
                    + " allowed here");
        }
        if (in.readableBytes() < FrameDescriptor.LENGTH_FIELD_LENGTH + length) {
            return;
        }
        in.skipBytes(FrameDescriptor.LENGTH_FIELD_LENGTH);
        ByteBuf frame = in.readRetainedSlice((int) length);
        try {
            out.add(parse(frame));
        } catch (IndexOutOfBoundsException e) {
            failed = true;
            throw new CorruptedFrameException("frame body shorter than its fields (" + frame.writerIndex() + " bytes)", e);
        } catch (RuntimeException e) {
            failed = true;
            throw e;
        } finally {
            frame.release();
        }
    }

    private static Frame parse(ByteBuf f) {
        if (!f.isReadable()) {
            throw new CorruptedFrameException("empty frame: no type byte");
        }
        byte type = f.readByte();
        Frame frame;
        switch (type) {
            case FrameDescriptor.HELLO:
                return hello(f);
            case FrameDescriptor.CATALOG_ENTRY:
                frame = new Frame.CatalogEntry(logNumber(f), f.readLong(), f.readLong(),
                        text(f, FrameDescriptor.MAX_LOG_NAME_BYTES, "log name"), settings(f));
                break;
            case FrameDescriptor.CATALOG_DROP:
                frame = new Frame.CatalogDrop(logNumber(f));
                break;
            case FrameDescriptor.CATALOG_COMPLETE:
                frame = new Frame.CatalogComplete(logNumber(f));
                break;
            case FrameDescriptor.ON_LOG: {
                int log = logNumber(f);
                if (!f.isReadable()) {
                    throw new CorruptedFrameException("an On log frame with no frame inside");
                }
                return new Frame.OnLog(log, perLog(f));
            }
            default:
                f.readerIndex(f.readerIndex() - 1);
                return perLog(f);
        }
        end(f, type);
        return frame;
    }

    /** Version 5's hello, version 6's, or (another version) just the version, to be refused as such. */
    private static Frame hello(ByteBuf f) {
        int version = f.readUnsignedShort();
        Frame frame;
        if (version == FrameDescriptor.STORE_PROTOCOL_VERSION) {
            frame = new Frame.StoreHello(version, text(f, FrameDescriptor.MAX_NAME_BYTES, "replica name"),
                    bytes(f, FrameDescriptor.MAX_SECRET_BYTES, "secret"));
        } else if (version == FrameDescriptor.PROTOCOL_VERSION) {
            frame = new Frame.Hello(version, f.readLong(), epochNumber(f.readInt()),
                    lsn(f.readLong(), "epoch start LSN"), lsn(f.readLong(), "start LSN"),
                    text(f, FrameDescriptor.MAX_NAME_BYTES, "replica name"), bytes(f, FrameDescriptor.MAX_SECRET_BYTES, "secret"));
        } else {
            // Another version lays out the rest differently: hand over just the version, to be refused as such.
            f.skipBytes(f.readableBytes());
            return new Frame.Hello(version, 0, 1, 0, 0, "", new byte[0]);
        }
        end(f, FrameDescriptor.HELLO);
        return frame;
    }

    /** A frame about one log: version 5's (Welcome, Error, Data, Keepalive, Status, Archived) or version 6's (Start, Restart, End). */
    private static Frame perLog(ByteBuf f) {
        byte type = f.readByte();
        Frame frame;
        switch (type) {
            case FrameDescriptor.WELCOME:
                Frame.Welcome welcome = new Frame.Welcome(f.readUnsignedShort(), f.readLong(), f.readLong(),
                        epochNumber(f.readInt()), lsn(f.readLong(), "flushed LSN"), lsn(f.readLong(), "oldest LSN"), history(f));
                if (welcome.oldestLsn() > welcome.flushedLsn()) {
                    throw new CorruptedFrameException("the welcome's oldest LSN " + welcome.oldestLsn()
                            + " is beyond its flushed LSN " + welcome.flushedLsn());
                }
                if (welcome.epoch() != welcome.history().current().number()) {
                    throw new CorruptedFrameException("the welcome's epoch " + welcome.epoch() + " is not the last of its history "
                            + welcome.history());
                }
                frame = welcome;
                break;
            case FrameDescriptor.ERROR:
                frame = new Frame.Error(f.readUnsignedShort(), text(f, FrameDescriptor.MAX_MESSAGE_BYTES, "message"));
                break;
            case FrameDescriptor.DATA: {
                long start = lsn(f.readLong(), "data start LSN");
                long flushed = lsn(f.readLong(), "flushed LSN");
                long sent = f.readLong();
                ByteBuf bytes = f.retainedSlice(f.readerIndex(), f.readableBytes());
                f.skipBytes(f.readableBytes());
                return new Frame.Data(start, flushed, sent, bytes); // the rest of the frame is the payload
            }
            case FrameDescriptor.KEEPALIVE:
                frame = new Frame.Keepalive(lsn(f.readLong(), "flushed LSN"), f.readLong(), flag(f.readByte()));
                break;
            case FrameDescriptor.STATUS:
                frame = new Frame.Status(lsn(f.readLong(), "written LSN"), lsn(f.readLong(), "flushed LSN"),
                        lsn(f.readLong(), "applied LSN"), f.readLong(), flag(f.readByte()));
                break;
            case FrameDescriptor.ARCHIVED:
                frame = new Frame.Archived(lsn(f.readLong(), "archived floor LSN"));
                break;
            case FrameDescriptor.START:
                frame = new Frame.Start(f.readLong(), epochNumber(f.readInt()), lsn(f.readLong(), "epoch start LSN"),
                        lsn(f.readLong(), "start LSN"));
                break;
            case FrameDescriptor.RESTART:
                frame = new Frame.Restart();
                break;
            case FrameDescriptor.END:
                frame = new Frame.End();
                break;
            default:
                throw new CorruptedFrameException(String.format("unknown frame type 0x%02x", type & 0xFF));
        }
        end(f, type);
        return frame;
    }

    private static void end(ByteBuf f, byte type) {
        if (f.isReadable()) {
            throw new CorruptedFrameException(f.readableBytes() + " unexpected bytes after a frame of type '" + (char) type + "'");
        }
    }

    private static int logNumber(ByteBuf f) {
        int n = f.readInt();
        if (n < 0) {
            throw new CorruptedFrameException("a log number (or count) is negative: " + n);
        }
        return n;
    }

    private static Map<String, String> settings(ByteBuf f) {
        int count = f.readUnsignedShort();
        if (count > FrameDescriptor.MAX_SETTINGS) {
            throw new CorruptedFrameException(count + " settings (at most " + FrameDescriptor.MAX_SETTINGS + ")");
        }
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            settings.put(text(f, FrameDescriptor.MAX_SETTING_BYTES, "setting name"),
                    text(f, FrameDescriptor.MAX_SETTING_BYTES, "setting value"));
        }
        return settings;
    }

    private static long lsn(long value, String what) {
        if (value < 0) {
            throw new CorruptedFrameException(what + " is negative: " + value);
        }
        return value;
    }

    private static int epochNumber(int value) {
        if (value < 1) {
            throw new CorruptedFrameException("epoch number must be at least 1, got " + value);
        }
        return value;
    }

    private static EpochHistory history(ByteBuf f) {
        int count = f.readUnsignedShort();
        if (count < 1 || count > FrameDescriptor.MAX_HISTORY_ENTRIES) {
            throw new CorruptedFrameException("an epoch history of " + count + " entries (1 to "
                    + FrameDescriptor.MAX_HISTORY_ENTRIES + " allowed)");
        }
        List<Epoch> epochs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            epochs.add(new Epoch(epochNumber(f.readInt()), lsn(f.readLong(), "epoch start LSN")));
        }
        try {
            return EpochHistory.of(epochs);
        } catch (IllegalArgumentException e) {
            throw new CorruptedFrameException("not an epoch history: " + e.getMessage());
        }
    }

    private static boolean flag(byte b) {
        if (b != 0 && b != 1) {
            throw new CorruptedFrameException("a flag must be 0 or 1, got " + b);
        }
        return b == 1;
    }

    private static byte[] bytes(ByteBuf f, int max, String what) {
        int length = f.readUnsignedShort();
        if (length > max) {
            throw new CorruptedFrameException(what + " of " + length + " bytes is longer than " + max);
        }
        byte[] b = new byte[length];
        f.readBytes(b);
        return b;
    }

    private static String text(ByteBuf f, int max, String what) {
        byte[] b = bytes(f, max, what);
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
        } catch (CharacterCodingException e) {
            throw new CorruptedFrameException(what + " is not UTF-8", e);
        }
    }
}
