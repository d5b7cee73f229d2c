package io.walden.replication.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The event loops a replication component runs its channels on: a Netty event-loop group, the server and client
 * channel classes of that group's transport (a bootstrap made here always uses the class that fits the group), and
 * who shuts the group down.
 *
 * <ul>
 *   <li>{@link #ownNio()}: what {@code ReplicationServer}, {@code ReplicaClient} and {@code PrimaryIdentity.fetch} use
 *       when given none: a NIO group of one thread of their own, shut down when they close.</li>
 *   <li>{@link #shared}: a group the caller made (a process's one group, e.g. the sidecar's HTTP workers, epoll or
 *       NIO) and shuts down itself, after closing every component it gave it to. A component never shuts a shared
 *       group down; closing it closes its own channels and leaves the group running.</li>
 * </ul>
 *
 * <p>An owned bundle belongs to the one component it is given to: that component's close shuts its group down. Give
 * a shared bundle to any number of them.
 *
 * <p>Thread-safety: immutable; every method from any thread.
 */
public final class EventLoops {
    private final EventLoopGroup group;
    private final Class<? extends ServerSocketChannel> serverChannel;
    private final Class<? extends SocketChannel> socketChannel;
    private final boolean owned;

    private EventLoops(EventLoopGroup group, Class<? extends ServerSocketChannel> serverChannel,
                       Class<? extends SocketChannel> socketChannel, boolean owned) {
        this.group = Objects.requireNonNull(group, "group");
        this.serverChannel = Objects.requireNonNull(serverChannel, "serverChannel");
        this.socketChannel = Objects.requireNonNull(socketChannel, "socketChannel");
        this.owned = owned;
    }

    /**
     * A new NIO group of one thread, owned: the component given it shuts it down when it closes (the default of every
     * replication component, and what each made before this type existed). Its thread starts with its first task.
     */
    public static EventLoops ownNio() {
        return new EventLoops(new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()), NioServerSocketChannel.class,
                NioSocketChannel.class, true);
    }

    /**
     * A group the caller owns, with its transport's channel classes (e.g. {@code EpollServerSocketChannel} and
     * {@code EpollSocketChannel} for an {@code EpollIoHandler} group). Components run on it and never shut it down: shut
     * it down after closing them. A class that does not fit the group fails the first bind or connect (Netty's
     * "incompatible event loop type").
     */
    public static EventLoops shared(EventLoopGroup group, Class<? extends ServerSocketChannel> serverChannel,
                                    Class<? extends SocketChannel> socketChannel) {
        return new EventLoops(group, serverChannel, socketChannel, false);
    }

    /**
     * A NIO group the caller owns, as {@link #shared}.
     *
     * @throws IllegalArgumentException when {@code group} is an I/O group of another transport
     */
    public static EventLoops sharedNio(EventLoopGroup group) {
        if (group instanceof IoEventLoopGroup io && !io.isIoType(NioIoHandler.class)) {
            throw new IllegalArgumentException("the event loop group is not a NIO one: pass its transport's channel "
                    + "classes to EventLoops.shared");
        }
        return shared(group, NioServerSocketChannel.class, NioSocketChannel.class);
    }

    /** The group the channels run on. */
    public EventLoopGroup group() {
        return group;
    }

    /** The listening channel class that fits {@link #group()}. */
    public Class<? extends ServerSocketChannel> serverChannel() {
        return serverChannel;
    }

    /** The connection channel class that fits {@link #group()}. */
    public Class<? extends SocketChannel> socketChannel() {
        return socketChannel;
    }

    /** Whether the component given this bundle shuts its group down when it closes ({@link #ownNio()}). */
    public boolean owned() {
        return owned;
    }

    /** A server bootstrap on this group (parent and children) with the matching listening channel class. */
    public ServerBootstrap serverBootstrap() {
        return new ServerBootstrap().group(group).channel(serverChannel);
    }

    /** A client bootstrap on this group with the matching connection channel class. */
    public Bootstrap bootstrap() {
        return new Bootstrap().group(group).channel(socketChannel);
    }

    /**
     * Shuts the group down (no quiet period, at most {@code timeoutSeconds}) when this bundle owns it; leaves a shared
     * group running. Close the component's own channels first: a shared group keeps running them.
     *
     * @return the shutdown's future; an already completed one for a shared group
     */
    public Future<?> shutdownIfOwned(long timeoutSeconds) {
        if (!owned) {
            return ImmediateEventExecutor.INSTANCE.newSucceededFuture(null);
        }
        return group.shutdownGracefully(0, timeoutSeconds, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        return (owned ? "own " : "shared ") + serverChannel.getSimpleName() + "/" + socketChannel.getSimpleName() + " event loops";
    }
}
