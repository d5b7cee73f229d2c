package io.walden.replication.protocol;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fuzz target for the replication frame decoder (docs/replication-protocol.md), fed as the network feeds it: in
 * pieces of any size. Every frame it yields encodes back to exactly the bytes it was read from (nothing invented,
 * nothing dropped), nothing is yielded after the first error, every error is a codec error (which the pipeline's
 * last handler turns into an Error frame and a close), and a frame longer than the limit is refused before its body
 * arrives. Its corpus runs with the unit tests; {@code mvn verify} fuzzes it for a few seconds, -Pfuzz longer.
 */
class FrameDecoderFuzzTest {

    @FuzzTest(maxDuration = "5s")
    void decodedFramesEncodeBackToTheirBytesAndErrorsAreFinal(FuzzedDataProvider data) {
        int limit = data.consumeBoolean() ? FrameDescriptor.HANDSHAKE_MAX_FRAME_LENGTH : data.consumeInt(1, 4096);
        List<byte[]> pieces = new ArrayList<>();
        while (data.remainingBytes() > 0) {
            pieces.add(data.consumeBytes(data.consumeInt(1, 512)));
        }
        byte[] stream = concat(pieces);

        List<Object> events = new ArrayList<>(); // frames and errors, in the order the pipeline's next handler sees them
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameDecoder(limit), new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                events.add(msg);
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                events.add(cause);
            }
        });
        EmbeddedChannel encoder = new EmbeddedChannel(new FrameEncoder());
        int consumed = 0;
        boolean failed = false;
        try {
            for (byte[] piece : pieces) {
                decoder.writeInbound(Unpooled.wrappedBuffer(piece));
            }
            for (Object event : events) {
                if (event instanceof Throwable error) {
                    assertThat(error).as("every error is a codec error").isInstanceOf(DecoderException.class);
                    failed = true;
                    continue;
                }
                assertThat(failed).as("a frame after an error").isFalse();
                Frame frame = (Frame) event;
                byte[] encoded = encode(encoder, ReferenceCountUtil.retain(frame)); // the encoder releases what it encodes
                if (!(frame instanceof Frame.Hello h) || h.version() == FrameDescriptor.PROTOCOL_VERSION) {
                    // (a hello of another version is handed on as just its version, to be refused as such)
                    assertThat(encoded.length - FrameDescriptor.LENGTH_FIELD_LENGTH).isLessThanOrEqualTo(limit);
                    assertThat(Arrays.copyOfRange(stream, consumed, consumed + encoded.length))
                            .as("frame %s encodes back to its bytes", frame).isEqualTo(encoded);
                }
                consumed += FrameDescriptor.LENGTH_FIELD_LENGTH + (int) lengthAt(stream, consumed);
            }
            if (!failed && stream.length - consumed >= FrameDescriptor.LENGTH_FIELD_LENGTH) {
                long pending = lengthAt(stream, consumed);
                assertThat(pending).as("a frame over the limit is refused before its body arrives").isLessThanOrEqualTo(limit);
                assertThat((long) (stream.length - consumed)).as("a whole frame left undecoded")
                        .isLessThan(FrameDescriptor.LENGTH_FIELD_LENGTH + pending);
            }
        } finally {
            events.forEach(ReferenceCountUtil::release);
            decoder.finishAndReleaseAll();
            encoder.finishAndReleaseAll();
        }
    }

    private static byte[] encode(EmbeddedChannel encoder, Frame frame) {
        try {
            if (!encoder.writeOutbound(frame)) {
                fail("the encoder wrote nothing for " + frame);
            }
        } catch (RuntimeException e) {
            throw new AssertionError("a decoded frame cannot be encoded: " + frame, e);
        }
        ByteBuf out = encoder.readOutbound();
        try {
            return ByteBufUtil.getBytes(out);
        } finally {
            ReferenceCountUtil.release(out);
        }
    }

    /** The big-endian unsigned length prefix at {@code at}. */
    private static long lengthAt(byte[] stream, int at) {
        return Unpooled.wrappedBuffer(stream).getUnsignedInt(at);
    }

    private static byte[] concat(List<byte[]> pieces) {
        int n = 0;
        for (byte[] p : pieces) {
            n += p.length;
        }
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : pieces) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }
}
