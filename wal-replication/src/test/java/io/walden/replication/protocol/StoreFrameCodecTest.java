package io.walden.replication.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static io.walden.replication.protocol.FrameCodecTest.codec;
import static io.walden.replication.protocol.FrameCodecTest.roundTrip;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The frames version 6 adds (docs/replication-protocol.md, "Version 6") through the real Netty codec. */
class StoreFrameCodecTest {

    @Test
    void shouldRoundTripTheStoreHelloAndTheCatalogFrames() {
        Frame.StoreHello hello = (Frame.StoreHello) roundTrip(new Frame.StoreHello(FrameDescriptor.STORE_PROTOCOL_VERSION, "r1",
                "s3cret".getBytes(StandardCharsets.UTF_8)));
        assertThat(hello.version()).isEqualTo(6);
        assertThat(hello.name()).isEqualTo("r1");
        assertThat(new String(hello.secret(), StandardCharsets.UTF_8)).isEqualTo("s3cret");
        Frame.CatalogEntry entry = new Frame.CatalogEntry(7, 0xABCDL, 1L << 20, "orders",
                Map.of("retention-bytes", "1000000", "compression", "lz4"));
        assertThat(roundTrip(entry)).isEqualTo(entry);
        assertThat(roundTrip(new Frame.CatalogDrop(7))).isEqualTo(new Frame.CatalogDrop(7));
        assertThat(roundTrip(new Frame.CatalogComplete(3))).isEqualTo(new Frame.CatalogComplete(3));
    }

    @Test
    void shouldRoundTripPerLogFramesInsideTheOnLogEnvelope() {
        assertThat(roundTrip(new Frame.OnLog(2, new Frame.Start(0x55, 3, 0x40, 0x1000))))
                .isEqualTo(new Frame.OnLog(2, new Frame.Start(0x55, 3, 0x40, 0x1000)));
        assertThat(roundTrip(new Frame.OnLog(2, new Frame.Restart()))).isEqualTo(new Frame.OnLog(2, new Frame.Restart()));
        assertThat(roundTrip(new Frame.OnLog(2, new Frame.End()))).isEqualTo(new Frame.OnLog(2, new Frame.End()));
        assertThat(roundTrip(new Frame.OnLog(0, new Frame.Status(3, 2, 1, 9, true))))
                .isEqualTo(new Frame.OnLog(0, new Frame.Status(3, 2, 1, 9, true)));
        assertThat(roundTrip(new Frame.OnLog(5, new Frame.Error(Frame.Error.EPOCH_DIVERGED, "diverged"))))
                .isEqualTo(new Frame.OnLog(5, new Frame.Error(4, "diverged")));
        Frame.OnLog data = (Frame.OnLog) roundTrip(new Frame.OnLog(9, new Frame.Data(64, 96, 5, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}))));
        try {
            assertThat(data.log()).isEqualTo(9);
            Frame.Data d = (Frame.Data) data.frame();
            assertThat(d.startLsn()).isEqualTo(64);
            assertThat(d.endLsn()).isEqualTo(67);
        } finally {
            assertThat(data.release()).as("the envelope releases the data it holds").isTrue();
        }
    }

    @Test
    void aVersion5HelloStillDecodesAsVersion5sSoThatAVersion6PrimaryServesAnOldReplicaTheDefaultLog() {
        Frame.Hello hello = (Frame.Hello) roundTrip(new Frame.Hello(FrameDescriptor.PROTOCOL_VERSION, 7, 1, 0, 64, "old", new byte[0]));
        assertThat(hello.logId()).isEqualTo(7);
        assertThat(hello.name()).isEqualTo("old");
    }

    @Test
    void shouldRefuseAConnectionFrameInsideTheEnvelopeAndANestedEnvelope() {
        ByteBuf nested = Unpooled.buffer().writeByte(FrameDescriptor.ON_LOG).writeInt(1).writeByte(FrameDescriptor.ON_LOG)
                .writeInt(2).writeByte(FrameDescriptor.RESTART);
        assertMalformed(nested, "unknown frame type 0x4c");
        ByteBuf drop = Unpooled.buffer().writeByte(FrameDescriptor.ON_LOG).writeInt(1).writeByte(FrameDescriptor.CATALOG_DROP)
                .writeInt(2);
        assertMalformed(drop, "unknown frame type 0x44");
        assertMalformed(Unpooled.buffer().writeByte(FrameDescriptor.ON_LOG).writeInt(1), "no frame inside");
        assertMalformed(Unpooled.buffer().writeByte(FrameDescriptor.CATALOG_DROP).writeInt(-1), "negative");
        EmbeddedChannel out = codec();
        assertThatThrownBy(() -> out.writeOutbound(new Frame.OnLog(1, new Frame.CatalogDrop(2))))
                .hasRootCauseInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a per-log frame");
        out.finishAndReleaseAll();
    }

    private static void assertMalformed(ByteBuf body, String reason) {
        ByteBuf framed = Unpooled.buffer().writeInt(body.readableBytes()).writeBytes(body);
        body.release();
        FrameCodecTest.assertMalformed(framed, reason);
    }
}
