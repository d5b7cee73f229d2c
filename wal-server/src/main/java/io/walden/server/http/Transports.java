package io.walden.server.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringChannelOption;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.walden.replication.transport.EventLoops;

import java.util.Locale;

/**
 * The network transport the server's event loops use, chosen once at start: Linux's epoll or io_uring when the
 * native library loads (and the kernel allows it: a container may forbid io_uring), Java's NIO otherwise. Which one
 * was chosen, and why another was not, is logged and shown in {@code /admin/status}.
 *
 * <p>Thread-safety: immutable.
 */
public final class Transports {
    /** What {@code --transport} accepts. */
    public enum Kind {
        AUTO, EPOLL, IO_URING, NIO;

        public static Kind parse(String text) {
            try {
                return valueOf(text.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("transport must be auto, epoll, io_uring or nio, got '" + text + "'", e);
            }
        }
    }

    private final Kind kind;
    private final String note;

    private Transports(Kind kind, String note) {
        this.kind = kind;
        this.note = note;
    }

    /**
     * The transport for {@code wanted}: {@code AUTO} takes epoll where it loads (the most used and tested native
     * transport, measured here as fast as io_uring for this server's small requests), NIO otherwise.
     *
     * @throws IllegalStateException when a native transport was asked for by name and cannot be used
     */
    public static Transports choose(Kind wanted) {
        switch (wanted) {
            case EPOLL:
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("transport epoll cannot be used: " + Epoll.unavailabilityCause());
                }
                return new Transports(Kind.EPOLL, "asked for");
            case IO_URING:
                if (!IoUring.isAvailable()) {
                    throw new IllegalStateException("transport io_uring cannot be used: " + IoUring.unavailabilityCause());
                }
                return new Transports(Kind.IO_URING, "asked for");
            case NIO:
                return new Transports(Kind.NIO, "asked for");
            default:
                if (Epoll.isAvailable()) {
                    return new Transports(Kind.EPOLL, "chosen: the native library loads");
                }
                return new Transports(Kind.NIO, "chosen: epoll is unavailable (" + Epoll.unavailabilityCause() + ")");
        }
    }

    /** The transport's name as {@code /admin/status} shows it: {@code epoll}, {@code io_uring} or {@code nio}. */
    public String name() {
        return kind.name().toLowerCase(Locale.ROOT);
    }

    /** Why this transport (for the log). */
    public String note() {
        return note;
    }

    /**
     * Whether the loops' timers fire to the microsecond (epoll and io_uring use a timerfd), or only to the millisecond
     * (Java's NIO selector), too coarse to put a flush off by a fraction of one.
     */
    public boolean hasFineTimers() {
        return kind != Kind.NIO;
    }

    /** An event loop group of {@code threads} (0: Netty's default, twice the cores) on this transport. */
    public EventLoopGroup group(int threads) {
        return new MultiThreadIoEventLoopGroup(threads, factory());
    }

    private IoHandlerFactory factory() {
        switch (kind) {
            case EPOLL:
                return EpollIoHandler.newFactory();
            case IO_URING:
                return IoUringIoHandler.newFactory();
            default:
                return NioIoHandler.newFactory();
        }
    }

    /**
     * TCP keepalive on accepted connections: after {@code idleSeconds} of silence, {@code probes} probes
     * {@code intervalSeconds} apart find a peer that vanished without a FIN.
     */
    public void keepAlive(ServerBootstrap b, int idleSeconds, int intervalSeconds, int probes) {
        b.childOption(ChannelOption.SO_KEEPALIVE, true);
        switch (kind) {
            case EPOLL:
                b.childOption(EpollChannelOption.TCP_KEEPIDLE, idleSeconds)
                        .childOption(EpollChannelOption.TCP_KEEPINTVL, intervalSeconds)
                        .childOption(EpollChannelOption.TCP_KEEPCNT, probes);
                break;
            case IO_URING:
                b.childOption(IoUringChannelOption.TCP_KEEPIDLE, idleSeconds)
                        .childOption(IoUringChannelOption.TCP_KEEPINTVL, intervalSeconds)
                        .childOption(IoUringChannelOption.TCP_KEEPCNT, probes);
                break;
            default:
                b.childOption(NioChannelOption.of(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE), idleSeconds)
                        .childOption(NioChannelOption.of(jdk.net.ExtendedSocketOptions.TCP_KEEPINTERVAL), intervalSeconds)
                        .childOption(NioChannelOption.of(jdk.net.ExtendedSocketOptions.TCP_KEEPCOUNT), probes);
        }
    }

    /**
     * {@code group} (made by {@link #group(int)}) with this transport's channel classes, for replication to run on
     * (shared: replication never shuts it down; the server does, after closing replication).
     */
    public EventLoops eventLoops(EventLoopGroup group) {
        switch (kind) {
            case EPOLL:
                return EventLoops.shared(group, EpollServerSocketChannel.class, EpollSocketChannel.class);
            case IO_URING:
                return EventLoops.shared(group, IoUringServerSocketChannel.class, IoUringSocketChannel.class);
            default:
                return EventLoops.shared(group, NioServerSocketChannel.class, NioSocketChannel.class);
        }
    }

    public Class<? extends ServerChannel> serverChannel() {
        switch (kind) {
            case EPOLL:
                return EpollServerSocketChannel.class;
            case IO_URING:
                return IoUringServerSocketChannel.class;
            default:
                return NioServerSocketChannel.class;
        }
    }
}
