package io.walden.replication.replica;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDecoder;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One version 6 connection to the primary, the replica's side (docs/replication-protocol.md, "Version 6"): the hello;
 * the catalog, whose entries, drops and completion the {@link StoreCatalog} turns into logs created, started and
 * deleted; and each log's frames, handed to its {@link LogFollower} by number (or, for a log not created yet, the answer
 * to its identity question).
 *
 * <p>Thread-safety: Netty's event loop calls the handler; the catalog's work runs on the catalog thread.
 */
final class StoreReceiverHandler extends SimpleChannelInboundHandler<Frame> {
    private static final Logger LOG = LoggerFactory.getLogger(StoreReceiverHandler.class);
    /** Received but not yet written bytes, all logs together, above which the replica stops reading. */
    private static final long MAX_PENDING_BYTES = 64L << 20;

    /** A log as this connection numbers it: its entry, its follower once it exists, its identity while it is created. */
    static final class Numbered {
        final Frame.CatalogEntry entry;
        volatile LogFollower.Stream stream;
        volatile LogFollower follower;
        /** The Welcome answering this log's identity question (event loop only). */
        Frame.Welcome identity;

        Numbered(Frame.CatalogEntry entry) {
            this.entry = entry;
        }
    }

    private final StoreCatalog catalog;
    private final FrameDecoder decoder;
    private final Map<Integer, Numbered> numbers = new HashMap<>();
    private int highest = -1;
    private boolean complete;
    private PendingBytes pending;

    StoreReceiverHandler(StoreCatalog catalog, FrameDecoder decoder) {
        this.catalog = catalog;
        this.decoder = decoder;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        pending = new PendingBytes(ctx.channel(), MAX_PENDING_BYTES);
        catalog.connected(ctx.channel());
        ctx.writeAndFlush(new Frame.StoreHello(FrameDescriptor.STORE_PROTOCOL_VERSION, catalog.replicaName(), catalog.secret()));
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            LOG.warn("Nothing from the primary at {} for {} s; reconnecting", catalog.primary(), ReceiverHandler.IDLE_SECONDS);
            ctx.close();
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        if (frame instanceof Frame.OnLog on) {
            onLog(ctx, on);
        } else if (frame instanceof Frame.CatalogEntry entry) {
            onEntry(ctx, entry);
        } else if (frame instanceof Frame.CatalogDrop drop) {
            Numbered n = numbers.remove(drop.log());
            if (drop.log() == FrameDescriptor.DEFAULT_LOG_NUMBER || n == null && drop.log() > highest) {
                malformed(ctx, "a drop of log number " + drop.log() + ", which the catalog cannot drop or never named");
                return;
            }
            if (n != null) {
                catalog.dropped(ctx.channel(), n.entry.name());
            }
        } else if (frame instanceof Frame.CatalogComplete done) {
            if (complete || done.count() != numbers.size()) {
                malformed(ctx, "a catalog complete of " + done.count() + " logs after " + numbers.size() + " entries");
                return;
            }
            complete = true;
            Set<String> names = new HashSet<>();
            numbers.values().forEach(n -> names.add(n.entry.name()));
            catalog.complete(ctx.channel(), names);
        } else if (frame instanceof Frame.Error error) {
            catalog.refused(error);
            ctx.close();
        } else {
            malformed(ctx, "unexpected " + frame.getClass().getSimpleName() + " frame");
        }
    }

    private void onEntry(ChannelHandlerContext ctx, Frame.CatalogEntry entry) {
        Numbered known = numbers.get(entry.log());
        if (known != null && known.entry.logId() != entry.logId() || known == null && entry.log() <= highest
                || entry.log() == FrameDescriptor.DEFAULT_LOG_NUMBER != entry.name().equals(FrameDescriptor.DEFAULT_LOG)) {
            malformed(ctx, "catalog entry " + entry.log() + " (" + entry.name() + ") does not fit the catalog");
            return;
        }
        highest = Math.max(highest, entry.log());
        decoder.maxFrameLength(Math.max(decoder.maxFrameLength(), FrameDescriptor.dataFrameLimit(entry.segmentSize())));
        if (known != null) {
            catalog.changed(entry);
            return;
        }
        Numbered n = new Numbered(entry);
        numbers.put(entry.log(), n);
        catalog.listed(ctx.channel(), n, pending);
    }

    private void onLog(ChannelHandlerContext ctx, Frame.OnLog on) {
        Numbered n = numbers.get(on.log());
        if (n == null) {
            if (on.log() > highest) {
                malformed(ctx, "a frame about log number " + on.log() + ", which the catalog never named");
            }
            return; // it crossed the log's drop
        }
        LogFollower.Stream stream = n.stream;
        if (stream != null) {
            n.follower.onFrame(stream, on.frame());
            return;
        }
        // The log's identity question, asked before it is created here.
        if (on.frame() instanceof Frame.Welcome w) {
            n.identity = w;
        } else if (on.frame() instanceof Frame.Restart && n.identity != null) {
            catalog.create(ctx.channel(), n, n.identity, pending);
        } else if (on.frame() instanceof Frame.Error e) {
            LOG.warn("The primary did not tell the identity of log {}: {}; asking again", n.entry.name(), e.message());
            ctx.executor().schedule(() -> StoreCatalog.askIdentity(ctx.channel(), n), 500, TimeUnit.MILLISECONDS);
        }
    }

    private void malformed(ChannelHandlerContext ctx, String why) {
        LOG.error("The primary at {} sent a malformed catalog: {}; reconnecting", catalog.primary(), why);
        ctx.writeAndFlush(new Frame.Error(Frame.Error.MALFORMED, why)).addListener(f -> ctx.close());
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        catalog.lastError = cause.toString();
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        catalog.disconnected(ctx.channel());
    }
}
