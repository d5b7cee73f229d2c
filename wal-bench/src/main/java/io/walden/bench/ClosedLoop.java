package io.walden.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.HdrHistogram.Recorder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@link HttpLoad}'s closed loops: {@code connections} keep-alive connections to the server under test (a Netty
 * client, on the epoll transport where it loads), each a {@link ClosedLoopClient} keeping {@code pipeline} requests
 * in flight, back to back; latencies go into an HdrHistogram over the load measurement's window.
 *
 * <p>Thread-safety: one loop at a time, from one thread; each loop's connections run on an event loop group of its
 * own (at most two threads), shut down before the loop returns.
 */
final class ClosedLoop {
    /**
     * What one closed loop saw: its measured window (with the server's forces in it, from its
     * {@code walden_flushes_total}; -1 where it has no such meter), the answers counted in it, the server's CPU, a
     * failure.
     */
    record Outcome(LoadMeasurement.Window window, long answers, long serverCpuNanos, String failure) {
    }

    private static final String FLUSHES = "walden_flushes_total";

    private final LoadMeasurement measurement;

    ClosedLoop(LoadMeasurement measurement) {
        this.measurement = measurement;
    }

    /**
     * Runs the loop over the load measurement's window. Every answer must be 200; with {@code lsnOrder}, the LSNs a
     * connection gets back must increase (answers in order); the outcome's failure says what went wrong first.
     */
    Outcome measure(ServerProcess server, int connections, int pipeline, byte[] request, boolean lsnOrder)
            throws Exception {
        return run(server, connections, pipeline, request, lsnOrder, -1);
    }

    /** Runs the loop, one request in flight per connection, for {@code seconds} unmeasured. */
    void warmUp(ServerProcess server, int connections, byte[] request, long seconds) throws Exception {
        run(server, connections, 1, request, false, seconds);
    }

    /** Measured by the load measurement's window when {@code seconds} is negative, else for {@code seconds} unmeasured. */
    private Outcome run(ServerProcess server, int connections, int pipeline, byte[] request, boolean lsnOrder,
                        long seconds) throws Exception {
        Recorder recorder = new Recorder(3);
        LongAdder answers = new LongAdder();
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> failure = new AtomicReference<>();
        ByteBuf template = Unpooled.unreleasableBuffer(Unpooled.directBuffer(request.length).writeBytes(request));
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(Math.min(2, connections),
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try {
            List<Channel> channels = new ArrayList<>();
            CountDownLatch connected = new CountDownLatch(connections);
            Bootstrap b = new Bootstrap().group(group)
                    .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new ClosedLoopClient(template, pipeline, lsnOrder, recorder, answers,
                                    counting, stop, failure, connected));
                        }
                    });
            for (int i = 0; i < connections; i++) {
                channels.add(b.connect(server.address).sync().channel());
            }
            if (!connected.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the connections did not start within 30 s");
            }
            long serverCpu0 = server.cpuNanos();
            LoadMeasurement.Window w = seconds < 0 ? measurement.window(recorder, counting, () -> {
                double flushes = server.metric(FLUSHES);
                return Double.isNaN(flushes) ? -1 : (long) flushes;
            }) : null;
            if (seconds >= 0) {
                Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
            }
            long serverCpu = server.cpuNanos() - serverCpu0;
            stop.set(true);
            for (Channel ch : channels) {
                ch.close().syncUninterruptibly();
            }
            return new Outcome(w, answers.sum(), serverCpu, failure.get());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
