package io.walden.replication.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.walden.core.Epoch;
import io.walden.core.EpochHistory;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every frame of docs/replication-protocol.md through the real Netty codec (EmbeddedChannel), and malformed input. */
class FrameCodecTest {

    static EmbeddedChannel codec() {
        return new EmbeddedChannel(new FrameDecoder(1024), new FrameEncoder());
    }

    /** Encodes on one channel, feeds the bytes to another, returns what it decoded. */
    static Frame roundTrip(Frame frame) {
        EmbeddedChannel out = codec();
        assertThat(out.writeOutbound(frame)).isTrue();
        ByteBuf bytes = out.readOutbound();
        EmbeddedChannel in = codec();
        assertThat(in.writeInbound(bytes)).isTrue();
        Frame decoded = in.readInbound();
        assertThat(in.finish()).isFalse();
        out.finish();
        return decoded;
    }

    @Test
    void shouldRoundTripHelloWelcomeErrorKeepaliveAndStatus() {
        Frame.Hello hello = (Frame.Hello) roundTrip(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, 0x1234_5678_9ABC_DEF0L, 3, 0x1000, 0x16B374D848L, "replica-é",
                "s3cret".getBytes(StandardCharsets.UTF_8)));
        assertThat(hello.version()).isEqualTo(FrameDescriptor.PROTOCOL_VERSION);
        assertThat(hello.logId()).isEqualTo(0x1234_5678_9ABC_DEF0L);
        assertThat(hello.epoch()).isEqualTo(3);
        assertThat(hello.epochStartLsn()).isEqualTo(0x1000);
        assertThat(hello.startLsn()).isEqualTo(0x16B374D848L);
        assertThat(hello.name()).isEqualTo("replica-é");
        assertThat(new String(hello.secret(), StandardCharsets.UTF_8)).isEqualTo("s3cret");

        EpochHistory history = EpochHistory.of(List.of(new Epoch(1, 0),
                new Epoch(3, 0x1000)));
        assertThat(roundTrip(new Frame.Welcome(3, 42, 64L << 20, 3, 1000, 0x40, history)))
                .isEqualTo(new Frame.Welcome(3, 42, 64L << 20, 3, 1000, 0x40, history));
        assertThat(roundTrip(new Frame.Error(Frame.Error.LSN_REMOVED, "requested LSN 0/40 has already been removed")))
                .isEqualTo(new Frame.Error(3, "requested LSN 0/40 has already been removed"));
        assertThat(roundTrip(new Frame.Keepalive(777, 123456, true))).isEqualTo(new Frame.Keepalive(777, 123456, true));
        assertThat(roundTrip(new Frame.Status(300, 200, 100, 99, false))).isEqualTo(new Frame.Status(300, 200, 100, 99, false));
        assertThat(roundTrip(new Frame.Archived(0x30000))).isEqualTo(new Frame.Archived(0x30000));
        assertThat(roundTrip(new Frame.Archived(FrameDescriptor.NO_ARCHIVE))).isEqualTo(new Frame.Archived(Long.MAX_VALUE));
    }

    @Test
    void shouldCarryDataBytesExactlyAndLeaveTheirReleaseToTheConsumer() {
        byte[] log = new byte[200];
        for (int i = 0; i < log.length; i++) {
            log[i] = (byte) (i * 7);
        }
        Frame.Data data = (Frame.Data) roundTrip(new Frame.Data(64, 264, 5, Unpooled.wrappedBuffer(log)));
        try {
            assertThat(data.startLsn()).isEqualTo(64);
            assertThat(data.endLsn()).isEqualTo(264);
            assertThat(data.flushedLsn()).isEqualTo(264);
            byte[] got = new byte[data.bytes().readableBytes()];
            data.bytes().getBytes(data.bytes().readerIndex(), got);
            assertThat(got).isEqualTo(log);
        } finally {
            assertThat(data.release()).isTrue();
        }
    }

    @Test
    void shouldDecodeFramesSplitAcrossReadsAndManyInOneRead() {
        EmbeddedChannel out = codec();
        out.writeOutbound(new Frame.Keepalive(1, 2, false), new Frame.Status(3, 2, 1, 0, true));
        ByteBuf all = Unpooled.buffer();
        for (ByteBuf b; (b = out.readOutbound()) != null; ) {
            all.writeBytes(b);
            b.release();
        }
        EmbeddedChannel in = codec();
        while (all.isReadable()) {
            in.writeInbound(all.readRetainedSlice(Math.min(3, all.readableBytes()))); // three bytes at a time
        }
        all.release();
        assertThat((Frame) in.readInbound()).isEqualTo(new Frame.Keepalive(1, 2, false));
        assertThat((Frame) in.readInbound()).isEqualTo(new Frame.Status(3, 2, 1, 0, true));
        assertThat(in.finish()).isFalse();
    }

    @Test
    void shouldRefuseAFrameLongerThanTheLimitBeforeBufferingIt() {
        EmbeddedChannel in = codec();
        ByteBuf b = Unpooled.buffer().writeInt(1025).writeByte(FrameDescriptor.DATA);
        assertThatThrownBy(() -> in.writeInbound(b)).isInstanceOf(TooLongFrameException.class);
        in.finishAndReleaseAll();
    }

    @Test
    void shouldRefuseUnknownTypesShortBodiesTrailingBytesAndBadFieldsWithAReason() {
        assertMalformed(Unpooled.buffer().writeInt(1).writeByte('?'), "unknown frame type 0x3f");
        assertMalformed(Unpooled.buffer().writeInt(0), "empty frame");
        assertMalformed(Unpooled.buffer().writeInt(5).writeByte(FrameDescriptor.STATUS).writeInt(7), "shorter than its fields");
        assertMalformed(Unpooled.buffer().writeInt(19).writeByte(FrameDescriptor.KEEPALIVE).writeLong(1).writeLong(2).writeByte(1)
                .writeByte(0), "unexpected bytes");
        assertMalformed(Unpooled.buffer().writeInt(18).writeByte(FrameDescriptor.KEEPALIVE).writeLong(1).writeLong(2).writeByte(7),
                "a flag must be 0 or 1");
        assertMalformed(Unpooled.buffer().writeInt(18).writeByte(FrameDescriptor.KEEPALIVE).writeLong(-5).writeLong(2).writeByte(0),
                "negative");
        assertMalformed(Unpooled.buffer().writeInt(9).writeByte(FrameDescriptor.ARCHIVED).writeLong(-1), "negative");
        ByteBuf badName = Unpooled.buffer().writeByte(FrameDescriptor.HELLO).writeShort(FrameDescriptor.PROTOCOL_VERSION).writeLong(1).writeInt(1).writeLong(0).writeLong(64)
                .writeShort(2).writeByte(0xC3).writeByte(0x28).writeShort(0);
        assertMalformed(Unpooled.buffer().writeInt(badName.readableBytes()).writeBytes(badName), "not UTF-8");
        ByteBuf longName = Unpooled.buffer().writeByte(FrameDescriptor.HELLO).writeShort(FrameDescriptor.PROTOCOL_VERSION).writeLong(1).writeInt(1).writeLong(0).writeLong(64)
                .writeShort(65).writeZero(65).writeShort(0);
        assertMalformed(Unpooled.buffer().writeInt(longName.readableBytes()).writeBytes(longName), "longer than 64");
        ByteBuf epochZero = Unpooled.buffer().writeByte(FrameDescriptor.HELLO).writeShort(FrameDescriptor.PROTOCOL_VERSION).writeLong(1).writeInt(0).writeLong(0).writeLong(64)
                .writeShort(1).writeByte('a').writeShort(0);
        assertMalformed(Unpooled.buffer().writeInt(epochZero.readableBytes()).writeBytes(epochZero), "epoch number must be at least 1");
        ByteBuf backwards = Unpooled.buffer().writeByte(FrameDescriptor.WELCOME).writeShort(1).writeLong(1).writeLong(1 << 16).writeInt(2)
                .writeLong(64).writeLong(64).writeShort(2).writeInt(2).writeLong(0x1000).writeInt(1).writeLong(0);
        assertMalformed(Unpooled.buffer().writeInt(backwards.readableBytes()).writeBytes(backwards), "not an epoch history");
        ByteBuf oldestBeyondFlushed = Unpooled.buffer().writeByte(FrameDescriptor.WELCOME).writeShort(3).writeLong(1).writeLong(1 << 16)
                .writeInt(1).writeLong(64).writeLong(0x10000).writeShort(1).writeInt(1).writeLong(0);
        assertMalformed(Unpooled.buffer().writeInt(oldestBeyondFlushed.readableBytes()).writeBytes(oldestBeyondFlushed),
                "beyond its flushed LSN");
    }

    @Test
    void aHelloOfAnotherProtocolVersionDecodesToItsVersionAloneSoThatItIsRefusedAsUnsupported() {
        ByteBuf v1 = Unpooled.buffer().writeByte(FrameDescriptor.HELLO).writeShort(1).writeLong(7).writeInt(0).writeLong(64)
                .writeShort(2).writeBytes("r1".getBytes(StandardCharsets.UTF_8)).writeShort(0);
        EmbeddedChannel in = codec();
        in.writeInbound(Unpooled.buffer().writeInt(v1.readableBytes()).writeBytes(v1));
        Frame.Hello hello = in.readInbound();
        assertThat(hello.version()).isEqualTo(1);
        in.finish();
    }

    @Test
    void shouldAnswerAMalformedFrameWithAnErrorFrameAndClose() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1024), new FrameEncoder(), new ProtocolErrorHandler());
        ch.writeInbound(Unpooled.buffer().writeInt(1).writeByte('?'));
        ByteBuf answer = ch.readOutbound();
        EmbeddedChannel reader = codec();
        reader.writeInbound(answer);
        Frame.Error error = reader.readInbound();
        assertThat(error.code()).isEqualTo(Frame.Error.MALFORMED);
        assertThat(error.message()).contains("unknown frame type");
        assertThat(ch.isOpen()).isFalse();
        reader.finish();
    }

    @Test
    void shouldRefuseToEncodeANameOverTheLimit() {
        EmbeddedChannel out = codec();
        assertThatThrownBy(() -> out.writeOutbound(new Frame.Hello(1, 0, 1, 0, 64, "x".repeat(65), new byte[0])))
                .hasRootCauseInstanceOf(IllegalArgumentException.class).hasMessageContaining("replica name");
        out.finishAndReleaseAll();
    }

    static void assertMalformed(ByteBuf bytes, String reason) {
        EmbeddedChannel in = codec();
        assertThatThrownBy(() -> in.writeInbound(bytes))
                .isInstanceOf(DecoderException.class)
                .satisfies(e -> assertThat(e.getCause() instanceof CorruptedFrameException ? e.getCause() : e)
                        .hasMessageContaining(reason));
        in.finishAndReleaseAll();
    }
}
