package io.walden.replication.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;
import io.walden.core.Epoch;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes {@link Frame}s in the layout of {@link FrameDescriptor} (docs/replication-protocol.md). The bytes of a
 * {@link Frame.Data} are released once written (it is reference-counted, and Netty's encoder releases what it
 * encoded). Stateless: one instance may serve every channel.
 */
@ChannelHandler.Sharable
public final class FrameEncoder extends MessageToByteEncoder<Frame> {

    public FrameEncoder() {
        super(Frame.class);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, ByteBuf out) {
        int lengthAt = out.writerIndex();
        out.writeInt(0); // patched below
        if (frame instanceof Frame.OnLog on) {
            if (on.frame() instanceof Frame.OnLog || on.frame() instanceof Frame.Hello || on.frame() instanceof Frame.StoreHello
                    || on.frame() instanceof Frame.CatalogEntry || on.frame() instanceof Frame.CatalogDrop
                    || on.frame() instanceof Frame.CatalogComplete) {
                throw new IllegalArgumentException("not a per-log frame: " + on.frame().getClass().getSimpleName());
            }
            out.writeByte(FrameDescriptor.ON_LOG).writeInt(on.log());
            body(on.frame(), out);
        } else {
            body(frame, out);
        }
        out.setInt(lengthAt, out.writerIndex() - lengthAt - FrameDescriptor.LENGTH_FIELD_LENGTH);
    }

    /** A frame's type byte and body. */
    private static void body(Frame frame, ByteBuf out) {
        if (frame instanceof Frame.Hello h) {
            out.writeByte(FrameDescriptor.HELLO).writeShort(h.version()).writeLong(h.logId()).writeInt(h.epoch())
                    .writeLong(h.epochStartLsn()).writeLong(h.startLsn());
            writeText(out, h.name(), FrameDescriptor.MAX_NAME_BYTES, "replica name");
            writeBytes(out, h.secret(), FrameDescriptor.MAX_SECRET_BYTES, "secret");
        } else if (frame instanceof Frame.Welcome w) {
            out.writeByte(FrameDescriptor.WELCOME).writeShort(w.version()).writeLong(w.logId()).writeLong(w.segmentSize())
                    .writeInt(w.epoch()).writeLong(w.flushedLsn()).writeLong(w.oldestLsn());
            List<Epoch> epochs = w.history().epochs();
            if (epochs.size() > FrameDescriptor.MAX_HISTORY_ENTRIES) {
                throw new IllegalArgumentException("an epoch history of " + epochs.size() + " entries is longer than "
                        + FrameDescriptor.MAX_HISTORY_ENTRIES);
            }
            out.writeShort(epochs.size());
            for (Epoch e : epochs) {
                out.writeInt(e.number()).writeLong(e.startLsn());
            }
        } else if (frame instanceof Frame.Error e) {
            out.writeByte(FrameDescriptor.ERROR).writeShort(e.code());
            writeText(out, truncate(e.message()), FrameDescriptor.MAX_MESSAGE_BYTES, "message");
        } else if (frame instanceof Frame.Data d) {
            // MessageToByteEncoder releases the frame (a ReferenceCounted) after this method.
            out.writeByte(FrameDescriptor.DATA).writeLong(d.startLsn()).writeLong(d.flushedLsn()).writeLong(d.sendTimeMicros())
                    .writeBytes(d.bytes(), d.bytes().readerIndex(), d.bytes().readableBytes());
        } else if (frame instanceof Frame.Keepalive k) {
            out.writeByte(FrameDescriptor.KEEPALIVE).writeLong(k.flushedLsn()).writeLong(k.sendTimeMicros())
                    .writeByte(k.replyRequested() ? 1 : 0);
        } else if (frame instanceof Frame.Status s) {
            out.writeByte(FrameDescriptor.STATUS).writeLong(s.writtenLsn()).writeLong(s.flushedLsn()).writeLong(s.appliedLsn())
                    .writeLong(s.sendTimeMicros()).writeByte(s.replyRequested() ? 1 : 0);
        } else if (frame instanceof Frame.Archived a) {
            out.writeByte(FrameDescriptor.ARCHIVED).writeLong(a.floorLsn());
        } else if (frame instanceof Frame.StoreHello h) {
            out.writeByte(FrameDescriptor.HELLO).writeShort(h.version());
            writeText(out, h.name(), FrameDescriptor.MAX_NAME_BYTES, "replica name");
            writeBytes(out, h.secret(), FrameDescriptor.MAX_SECRET_BYTES, "secret");
        } else if (frame instanceof Frame.CatalogEntry c) {
            out.writeByte(FrameDescriptor.CATALOG_ENTRY).writeInt(c.log()).writeLong(c.logId()).writeLong(c.segmentSize());
            writeText(out, c.name(), FrameDescriptor.MAX_LOG_NAME_BYTES, "log name");
            if (c.settings().size() > FrameDescriptor.MAX_SETTINGS) {
                throw new IllegalArgumentException(c.settings().size() + " settings; at most " + FrameDescriptor.MAX_SETTINGS);
            }
            out.writeShort(c.settings().size());
            c.settings().forEach((k, v) -> {
                writeText(out, k, FrameDescriptor.MAX_SETTING_BYTES, "setting name");
                writeText(out, v, FrameDescriptor.MAX_SETTING_BYTES, "setting value");
            });
        } else if (frame instanceof Frame.CatalogDrop d) {
            out.writeByte(FrameDescriptor.CATALOG_DROP).writeInt(d.log());
        } else if (frame instanceof Frame.CatalogComplete c) {
            out.writeByte(FrameDescriptor.CATALOG_COMPLETE).writeInt(c.count());
        } else if (frame instanceof Frame.Start st) {
            out.writeByte(FrameDescriptor.START).writeLong(st.logId()).writeInt(st.epoch()).writeLong(st.epochStartLsn())
                    .writeLong(st.startLsn());
        } else if (frame instanceof Frame.Restart) {
            out.writeByte(FrameDescriptor.RESTART);
        } else if (frame instanceof Frame.End) {
            out.writeByte(FrameDescriptor.END);
        }
    }

    private static String truncate(String message) {
        String m = message == null ? "" : message;
        while (m.getBytes(StandardCharsets.UTF_8).length > FrameDescriptor.MAX_MESSAGE_BYTES) {
            m = m.substring(0, m.length() - Math.max(1, m.length() / 10));
        }
        return m;
    }

    private static void writeText(ByteBuf out, String text, int max, String what) {
        writeBytes(out, (text == null ? "" : text).getBytes(StandardCharsets.UTF_8), max, what);
    }

    private static void writeBytes(ByteBuf out, byte[] bytes, int max, String what) {
        byte[] b = bytes == null ? new byte[0] : bytes;
        if (b.length > max) {
            throw new IllegalArgumentException(what + " is " + b.length + " bytes; at most " + max);
        }
        out.writeShort(b.length).writeBytes(b);
    }
}
