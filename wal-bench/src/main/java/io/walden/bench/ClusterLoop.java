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
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@link ClusterLoad}'s closed loops: for each log, {@code clientsPerLog} keep-alive connections straight to the log's
 * primary (no redirect on the way), each a {@link ClosedLoopClient} with one append in flight, back to back. One
 * HdrHistogram recorder and one answer count for all; the CPU of every server process and of this one is read from
 * /proc at the edges of the measured window only (the warm-up is not in it).
 *
 * <p>Thread-safety: one loop at a time, from one thread; its connections run on an event loop group of its own (two
 * threads, as {@link ClosedLoop}'s), shut down before the loop returns.
 */
final class ClusterLoop {
    /**
     * What one loop saw in its measured window: the commits answered 200, the window's length, the latencies (µs),
     * each server process's CPU (in the order given), the load generator's own, and the first failure (a non-200
     * answer, a broken connection), null when there was none.
     */
    record Outcome(long commits, long elapsedNanos, Histogram histogram, long[] serverCpuNanos, long clientCpuNanos,
                   long machineBusyNanos, long flushes, String failure) {
    }

    private static final String FLUSHES = "walden_flushes_total";

    /** The forces of every log of every server so far (primaries' and replicas'); -1 where a server has no meter. */
    private static long flushes(List<ServerProcess> servers) {
        double sum = 0;
        for (ServerProcess s : servers) {
            sum += s.metric(FLUSHES);
        }
        return Double.isNaN(sum) ? -1 : (long) sum;
    }

    private ClusterLoop() {
    }

    static Outcome run(Map<String, InetSocketAddress> primaryByLog, int clientsPerLog, int payload,
                       List<ServerProcess> servers, long warmupMillis, long measureMillis) throws Exception {
        Recorder recorder = new Recorder(3);
        LongAdder answers = new LongAdder();
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> failure = new AtomicReference<>();
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        List<ByteBuf> templates = new ArrayList<>();
        try {
            List<Channel> channels = new ArrayList<>();
            CountDownLatch connected = new CountDownLatch(primaryByLog.size() * clientsPerLog);
            for (Map.Entry<String, InetSocketAddress> e : primaryByLog.entrySet()) {
                byte[] request = HttpMessages.post("/v1/logs/" + e.getKey() + "/records?durability=on", new byte[payload]);
                ByteBuf bytes = Unpooled.directBuffer(request.length).writeBytes(request);
                templates.add(bytes);
                ByteBuf template = Unpooled.unreleasableBuffer(bytes); // sent again and again; released at the end
                Bootstrap b = new Bootstrap().group(group)
                        .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                        .option(ChannelOption.TCP_NODELAY, true)
                        .handler(new ChannelInitializer<SocketChannel>() {
                            @Override
                            protected void initChannel(SocketChannel ch) {
                                ch.pipeline().addLast(new ClosedLoopClient(template, 1, false, recorder, answers,
                                        counting, stop, failure, connected));
                            }
                        });
                for (int i = 0; i < clientsPerLog; i++) {
                    channels.add(b.connect(e.getValue()).sync().channel());
                }
            }
            if (!connected.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the connections did not start within 30 s");
            }
            Thread.sleep(warmupMillis);
            long[] serverCpu = new long[servers.size()];
            for (int i = 0; i < serverCpu.length; i++) {
                serverCpu[i] = -servers.get(i).cpuNanos();
            }
            long self = ProcessHandle.current().pid();
            long clientCpu = -ServerProcess.cpuNanosOf(self);
            long machine = -machineBusyNanos();
            long flushes0 = flushes(servers);
            recorder.reset();
            counting.set(true);
            long t0 = System.nanoTime();
            Thread.sleep(measureMillis);
            counting.set(false);
            long elapsed = System.nanoTime() - t0;
            clientCpu += ServerProcess.cpuNanosOf(self);
            machine += machineBusyNanos();
            long flushes1 = flushes(servers);
            long flushes = flushes0 < 0 || flushes1 < 0 ? -1 : flushes1 - flushes0;
            for (int i = 0; i < serverCpu.length; i++) {
                serverCpu[i] += servers.get(i).cpuNanos();
            }
            Histogram h = recorder.getIntervalHistogram();
            stop.set(true);
            for (Channel ch : channels) {
                ch.close().syncUninterruptibly();
            }
            return new Outcome(answers.sum(), elapsed, h, serverCpu, clientCpu, machine, flushes, failure.get());
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            templates.forEach(ByteBuf::release); // the connections are closed: nothing sends them any more
        }
    }

    /**
     * The CPU time every core of the machine spent busy so far (/proc/stat's first line: user, nice, system, irq,
     * softirq; not idle, iowait or a hypervisor's steal), so that what other processes took meanwhile shows beside the
     * cluster's own; 0 where there is no /proc. Approximate: the kernel samples these counters at its tick, and the
     * softirq time of the cluster's own loopback traffic is in them but in no process's time.
     */
    static long machineBusyNanos() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long ticks = 0;
            for (int i : new int[] {1, 2, 3, 6, 7}) { // user nice system (idle iowait) irq softirq (steal)
                ticks += Long.parseLong(f[i]);
            }
            return ticks * (1_000_000_000L / 100); // USER_HZ is 100 on Linux
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
