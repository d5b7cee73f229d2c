package io.walden.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.walden.core.Durability;
import io.walden.core.Lsn;
import io.walden.core.SyncMethod;
import io.walden.core.Wal;
import io.walden.core.WalConfig;
import org.HdrHistogram.Recorder;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * The HTTP load generator: what a service in another language pays to commit through the sidecar. It starts
 * {@code walden.jar serve} as a child process on a fresh log, then drives it with closed-loop clients over
 * keep-alive connections (a Netty client, HdrHistogram latencies): 1, 4, 16, 64 and 256 connections, single and
 * batch appends at every durability level, {@code GET /health}, and a pipelined scenario that checks answers come
 * back in order with increasing LSNs. A lone connection is also measured against the embedded log's lone commit in
 * alternating slices on the same disk (the disk's latency drifts by 2-3x within minutes). Process CPU is reported
 * for the server and for this load generator, which share the machine's cores.
 *
 * <p>The machine's floor is measured beside it: {@code --floor BIN} names the compiled {@code src/main/c/http_floor.c},
 * a minimal epoll responder that answers {@code /health}'s bytes; the same client drives it at the same connection
 * counts, so the ratio says what the server adds to the kernel's own cost of a request on this machine.
 *
 * <p>Usage: {@code HttpLoad --jar wal-server/target/walden.jar [--floor BIN] [--server-opts 'JVM OPTIONS']
 * [--server-args 'SERVE FLAGS'] [--quick|--full] [--dir DIR] [--json FILE] [--only REGEX]}; {@code --only} runs the
 * scenarios whose name ("http local 16") contains a match; {@code --server-opts} adds JVM options to the server's
 * command line (a profiler agent, say), {@code --server-args} flags of {@code walden serve} ({@code --event-loops 4}).
 */
public final class HttpLoad {
    private static final int PAYLOAD = 64;
    private static final int BATCH = 16;
    private static final int[] CONNECTIONS = {1, 4, 16, 64, 256};

    private final boolean full;
    private final Pattern only;
    private final LoadMeasurement measurement;
    private final Path jar;
    private final Path floor;
    private final List<String> serverOpts;
    private final List<String> serverArgs;

    private HttpLoad(boolean full, String only, Path jar, Path floor, List<String> serverOpts, List<String> serverArgs) {
        this.serverArgs = serverArgs;
        this.floor = floor;
        this.full = full;
        this.only = Pattern.compile(only);
        this.measurement = new LoadMeasurement(full);
        this.jar = jar;
        this.serverOpts = serverOpts;
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>();
        Path jar = Path.of("wal-server/target/walden.jar");
        List<String> serverOpts = List.of();
        List<String> serverArgs = List.of();
        Path floor = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--jar")) {
                jar = Path.of(args[++i]);
            } else if (args[i].equals("--floor")) {
                floor = Path.of(args[++i]);
            } else if (args[i].equals("--server-opts")) {
                serverOpts = List.of(args[++i].trim().split("\\s+"));
            } else if (args[i].equals("--server-args")) {
                serverArgs = List.of(args[++i].trim().split("\\s+"));
            } else {
                rest.add(args[i]);
            }
        }
        LoadArgs a = LoadArgs.parse("HttpLoad [--jar JAR] [--floor BIN] [--server-opts OPTS] [--server-args ARGS]",
                rest.toArray(new String[0]),
                Path.of("target/http-load.json"));
        Files.createDirectories(a.dir());
        System.setProperty("walden.bench.dir", a.dir().toString());
        HttpLoad load = new HttpLoad(a.full(), a.only(), jar, floor, serverOpts, serverArgs);
        load.runAll();
        load.measurement.writeJson(a.json(), a.dir());
    }

    private boolean wanted(String name) {
        return only.matcher(name).find();
    }

    private void runAll() throws Exception {
        Path d = BenchFiles.newDir("http");
        try (ServerProcess server = ServerProcess.start(jar, serverOpts, serverArgs, d.resolve("log"))) {
            warmUp(server);
            if (wanted("http local vs embedded, interleaved")) {
                measurement.results().add(interleavedLone(server, full ? 50 : 25, 200));
            }
            Durability[] levels = full ? Durability.values() : new Durability[] {Durability.OFF, Durability.LOCAL, Durability.ON};
            for (int n : CONNECTIONS) {
                for (Durability level : levels) {
                    run(server, "http " + level.configName(), "append", n, 1,
                            post("/v1/records?durability=" + level.configName(), new byte[PAYLOAD]), true);
                }
                run(server, "http local batch", "batch", n, 1,
                        post("/v1/records/batch?durability=local", batchBody(BATCH, PAYLOAD)), false);
                run(server, "http health", "health", n, 1, get("/health"), false);
            }
            // Pipelining under load: every connection keeps 8 requests in flight; answers must come in order.
            run(server, "http local pipelined", "pipelined", 16, 8,
                    post("/v1/records?durability=local", new byte[PAYLOAD]), true);
        } finally {
            BenchFiles.delete(d);
        }
        runFloor();
    }

    /** The minimal C responder, at the same connection counts as /health (skipped, and said so, without --floor). */
    private void runFloor() throws Exception {
        if (floor == null || !Files.isExecutable(floor)) {
            System.out.println("no --floor binary: the machine's HTTP floor is not measured (wal-bench/run.sh compiles it with gcc)");
            return;
        }
        try (ServerProcess c = ServerProcess.startFloor(floor)) {
            for (int n : CONNECTIONS) {
                run(c, "c epoll floor health", "health", n, 1, get("/health"), false);
            }
        }
    }

    /**
     * Drives the new server through each kind of request for a few seconds before anything is measured: a sidecar
     * runs for days, and a JVM that has not compiled its hot paths yet spends more of the cores on its JIT compiler
     * than on requests.
     */
    private void warmUp(ServerProcess server) throws Exception {
        long seconds = full ? 5 : 3;
        System.out.println("warming the server up (" + 3 * seconds + " s)");
        closedLoop(server, 16, 1, post("/v1/records?durability=local", new byte[PAYLOAD]), false, seconds);
        closedLoop(server, 16, 1, post("/v1/records?durability=off", new byte[PAYLOAD]), false, seconds);
        closedLoop(server, 16, 1, get("/health"), false, seconds);
    }

    // ------------------------------------------------------------------ requests

    private static byte[] post(String path, byte[] body) {
        byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: walden\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[head.length + body.length];
        System.arraycopy(head, 0, out, 0, head.length);
        System.arraycopy(body, 0, out, head.length, body.length);
        return out;
    }

    private static byte[] get(String path) {
        return ("GET " + path + " HTTP/1.1\r\nHost: walden\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** A batch body: {@code count} records, each a 4-byte big-endian length and its bytes (docs/http-api.md). */
    private static byte[] batchBody(int count, int payload) {
        ByteBuf b = Unpooled.buffer();
        for (int i = 0; i < count; i++) {
            b.writeInt(payload).writeZero(payload);
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    // ------------------------------------------------------------------ closed-loop scenarios

    /**
     * {@code connections} keep-alive connections, each keeping {@code pipeline} requests in flight, back to back.
     * Every answer must be 200; with {@code lsnOrder}, the LSNs a connection gets back must increase (answers in order).
     */
    private void run(ServerProcess server, String name, String kind, int connections, int pipeline, byte[] request,
                     boolean lsnOrder) throws Exception {
        if (!wanted(name + " " + connections)) {
            return;
        }
        Outcome o = closedLoop(server, connections, pipeline, request, lsnOrder, -1);
        if (o.failure != null) {
            throw new IllegalStateException(name + " with " + connections + " connections: " + o.failure);
        }
        LoadMeasurement.Window w = o.window;
        Map<String, Object> r = measurement.record(name, kind, SyncMethod.FDATASYNC,
                kind.equals("health") ? 0 : PAYLOAD, connections, o.answers, w.elapsedNanos(), -1, w.histogram(),
                w.cpuNanos());
        r.put("connections", connections);
        r.put("pipeline", pipeline);
        r.put("recordsPerRequest", kind.equals("batch") ? BATCH : kind.equals("health") ? 0 : 1);
        r.put("serverCpuCores", LoadMeasurement.round2(o.serverCpuNanos / (double) w.elapsedNanos()));
        r.put("clientCpuCores", r.get("cpuCores"));
        System.out.printf(Locale.ROOT, "    server cpu %.2f cores, load generator cpu %.2f cores%n",
                o.serverCpuNanos / (double) w.elapsedNanos(), w.cpuNanos() / (double) w.elapsedNanos());
    }

    /** What one closed loop saw: its measured window, the answers counted in it, the server's CPU, a failure. */
    private record Outcome(LoadMeasurement.Window window, long answers, long serverCpuNanos, String failure) {
    }

    /** Runs the closed loop: measured by the load measurement's window, or for {@code seconds} unmeasured (warm-up). */
    private Outcome closedLoop(ServerProcess server, int connections, int pipeline, byte[] request, boolean lsnOrder,
                               long seconds) throws Exception {
        Recorder recorder = new Recorder(3);
        LongAdder answers = new LongAdder();
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<String> failure = new AtomicReference<>();
        ByteBuf template = Unpooled.unreleasableBuffer(Unpooled.directBuffer(request.length).writeBytes(request));
        boolean epoll = io.netty.channel.epoll.Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(Math.min(2, connections),
                epoll ? io.netty.channel.epoll.EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try {
            List<Channel> channels = new ArrayList<>();
            CountDownLatch connected = new CountDownLatch(connections);
            Bootstrap b = new Bootstrap().group(group)
                    .channel(epoll ? io.netty.channel.epoll.EpollSocketChannel.class : NioSocketChannel.class)
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
            LoadMeasurement.Window w = seconds < 0 ? measurement.window(recorder, counting, () -> -1) : null;
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

    /**
     * One keep-alive connection of a closed loop: sends {@code pipeline} requests, then one more per answer. Parses
     * answers itself (status line, {@code Content-Length}, body) so that the client spends as little of the shared
     * cores as it can; times each answer from the moment its request was written.
     */
    private static final class ClosedLoopClient extends ChannelInboundHandlerAdapter {
        private final ByteBuf template;
        private final int pipeline;
        private final boolean lsnOrder;
        private final Recorder recorder;
        private final LongAdder answers;
        private final AtomicBoolean counting;
        private final AtomicBoolean stop;
        private final AtomicReference<String> failure;
        private final CountDownLatch connected;
        private final long[] sentAt;
        private int sentHead;
        private int sentTail;
        private ByteBuf pending;
        private long lastLsn = -1;

        ClosedLoopClient(ByteBuf template, int pipeline, boolean lsnOrder, Recorder recorder, LongAdder answers,
                         AtomicBoolean counting, AtomicBoolean stop, AtomicReference<String> failure, CountDownLatch connected) {
            this.template = template;
            this.pipeline = pipeline;
            this.lsnOrder = lsnOrder;
            this.recorder = recorder;
            this.answers = answers;
            this.counting = counting;
            this.stop = stop;
            this.failure = failure;
            this.connected = connected;
            this.sentAt = new long[pipeline];
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            for (int i = 0; i < pipeline; i++) {
                send(ctx);
            }
            ctx.flush();
            connected.countDown();
        }

        private void send(ChannelHandlerContext ctx) {
            sentAt[sentTail++ % pipeline] = System.nanoTime();
            ctx.write(template.duplicate());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            if (pending == null) {
                pending = in;
            } else {
                pending = ctx.alloc().compositeBuffer().addComponents(true, pending, in);
            }
            boolean sent = false;
            int length;
            while ((length = completeAnswer(pending)) > 0) {
                answer(pending, length);
                pending.skipBytes(length);
                if (!stop.get()) {
                    send(ctx);
                    sent = true;
                }
            }
            if (!pending.isReadable()) {
                pending.release();
                pending = null;
            }
            if (sent) {
                ctx.flush();
            }
        }

        /** The length of the complete answer at the reader index, or 0 when more bytes are needed. */
        private static int completeAnswer(ByteBuf b) {
            int start = b.readerIndex();
            int end = b.writerIndex();
            int headEnd = -1;
            for (int i = start; i + 3 < end; i++) {
                if (b.getByte(i) == '\r' && b.getByte(i + 1) == '\n' && b.getByte(i + 2) == '\r' && b.getByte(i + 3) == '\n') {
                    headEnd = i + 4;
                    break;
                }
            }
            if (headEnd < 0) {
                return 0;
            }
            int contentLength = contentLength(b, start, headEnd);
            return headEnd + contentLength <= end ? headEnd - start + contentLength : 0;
        }

        private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);

        /** The Content-Length header's value in {@code [from, to)}, found without allocating (any letter case). */
        private static int contentLength(ByteBuf b, int from, int to) {
            for (int i = from; i + CONTENT_LENGTH.length < to; i++) {
                int k = 0;
                while (k < CONTENT_LENGTH.length && Character.toLowerCase(b.getByte(i + k)) == CONTENT_LENGTH[k]) {
                    k++;
                }
                if (k == CONTENT_LENGTH.length) {
                    int value = 0;
                    for (int j = i + k; j < to; j++) {
                        byte c = b.getByte(j);
                        if (c >= '0' && c <= '9') {
                            value = value * 10 + (c - '0');
                        } else if (c == '\r') {
                            return value;
                        }
                    }
                }
            }
            throw new IllegalStateException("an answer without Content-Length: " + b.toString(from, to - from,
                    StandardCharsets.US_ASCII));
        }

        private void answer(ByteBuf b, int length) {
            long latency = System.nanoTime() - sentAt[sentHead++ % pipeline];
            int start = b.readerIndex();
            boolean ok = b.getByte(start + 9) == '2' && b.getByte(start + 10) == '0' && b.getByte(start + 11) == '0';
            String text = null;
            if (!ok || lsnOrder) {
                text = b.toString(start, length, StandardCharsets.US_ASCII);
            }
            if (!ok) {
                failure.compareAndSet(null, "answered " + text);
                return;
            }
            if (lsnOrder) {
                int at = text.indexOf("\"lsn\":\"");
                long lsn = Lsn.parse(text.substring(at + 7, text.indexOf('"', at + 7)));
                if (lsn <= lastLsn) {
                    failure.compareAndSet(null, "answers out of order: LSN " + Lsn.format(lsn) + " after "
                            + Lsn.format(lastLsn) + " on one connection");
                }
                lastLsn = lsn;
            }
            if (counting.get()) {
                recorder.recordValue(Math.max(1, latency / 1000));
                answers.increment();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!stop.get()) {
                failure.compareAndSet(null, cause.toString());
            }
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ a lone connection against the embedded log

    /**
     * One connection's {@code durability=local} appends against the embedded log's lone LOCAL commit (in this JVM, a
     * log beside the server's on the same file system), in alternating slices: the median of the per-round ratios.
     * The HTTP client is a blocking socket: the least a client in any language could do per request.
     */
    private Map<String, Object> interleavedLone(ServerProcess server, int rounds, long sliceMillis) throws Exception {
        Path d = BenchFiles.newDir("embedded");
        List<Double> ratios = new ArrayList<>();
        double httpSum = 0;
        double embeddedSum = 0;
        int warmup = rounds / 5;
        byte[] request = post("/v1/records?durability=local", new byte[PAYLOAD]);
        try (Wal wal = Wal.open(WalConfig.builder(d).build());
             Socket socket = new Socket()) {
            socket.setTcpNoDelay(true);
            socket.connect(server.address);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            byte[] payload = new byte[PAYLOAD];
            long slice = TimeUnit.MILLISECONDS.toNanos(sliceMillis);
            for (int round = 0; round < rounds; round++) {
                long n = 0;
                long t0 = System.nanoTime();
                while (System.nanoTime() - t0 < slice) {
                    out.write(request);
                    readAnswer(in, buffer);
                    n++;
                }
                double httpRate = n / ((System.nanoTime() - t0) / 1e9);
                n = 0;
                t0 = System.nanoTime();
                while (System.nanoTime() - t0 < slice) {
                    wal.append(payload, Durability.LOCAL);
                    n++;
                }
                double embeddedRate = n / ((System.nanoTime() - t0) / 1e9);
                if (round >= warmup) {
                    ratios.add(httpRate / embeddedRate);
                    httpSum += httpRate;
                    embeddedSum += embeddedRate;
                }
            }
        } finally {
            BenchFiles.delete(d);
        }
        Collections.sort(ratios);
        int n = ratios.size();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("name", "http local vs embedded, interleaved");
        r.put("kind", "interleaved");
        r.put("syncMethod", SyncMethod.FDATASYNC.name());
        r.put("payload", PAYLOAD);
        r.put("committers", 1);
        r.put("rounds", n);
        r.put("httpRequestsPerSecond", Math.round(httpSum / n));
        r.put("embeddedCommitsPerSecond", Math.round(embeddedSum / n));
        r.put("medianRatio", LoadMeasurement.round2(ratios.get(n / 2)));
        r.put("p25Ratio", LoadMeasurement.round2(ratios.get(n / 4)));
        r.put("p75Ratio", LoadMeasurement.round2(ratios.get(3 * n / 4)));
        System.out.printf(Locale.ROOT, "%-60s: http %,d/s, embedded %,d/s, median ratio %.2f (p25 %.2f, p75 %.2f) over %d rounds%n",
                r.get("name"), r.get("httpRequestsPerSecond"), r.get("embeddedCommitsPerSecond"), r.get("medianRatio"),
                r.get("p25Ratio"), r.get("p75Ratio"), n);
        return r;
    }

    /** Reads one answer (head and Content-Length body) from a blocking stream; throws unless it is a 200. */
    private static void readAnswer(InputStream in, byte[] buffer) throws IOException {
        int filled = 0;
        int headEnd = -1;
        int contentLength = -1;
        while (true) {
            int n = in.read(buffer, filled, buffer.length - filled);
            if (n < 0) {
                throw new IOException("the server closed the connection");
            }
            filled += n;
            if (headEnd < 0) {
                for (int i = 0; i + 3 < filled; i++) {
                    if (buffer[i] == '\r' && buffer[i + 1] == '\n' && buffer[i + 2] == '\r' && buffer[i + 3] == '\n') {
                        headEnd = i + 4;
                        String head = new String(buffer, 0, headEnd, StandardCharsets.US_ASCII);
                        if (!head.startsWith("HTTP/1.1 200")) {
                            throw new IOException("answered " + head);
                        }
                        int at = head.toLowerCase(Locale.ROOT).indexOf("content-length:");
                        contentLength = Integer.parseInt(head.substring(at + 15, head.indexOf('\r', at)).trim());
                        break;
                    }
                }
            }
            if (headEnd >= 0 && filled >= headEnd + contentLength) {
                return; // one request at a time: nothing follows this answer
            }
        }
    }

    // ------------------------------------------------------------------ the server under test

    /** {@code java -jar walden.jar serve} on a fresh log and a free port, stopped (SIGTERM) at the end. */
    static final class ServerProcess implements AutoCloseable {
        final Process process;
        final InetSocketAddress address;

        private ServerProcess(Process process, InetSocketAddress address) {
            this.process = process;
            this.address = address;
        }

        /** The C floor on a free port (it has no /ready: it is ready once it accepts a connection and answers). */
        static ServerProcess startFloor(Path binary) throws Exception {
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                port = s.getLocalPort();
            }
            Process p = new ProcessBuilder(binary.toAbsolutePath().toString(), Integer.toString(port))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return awaitAnswer(p, new InetSocketAddress("127.0.0.1", port), "the C floor");
        }

        static ServerProcess start(Path jar, List<String> jvmOptions, List<String> serveArgs, Path dataDir) throws Exception {
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                port = s.getLocalPort();
            }
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(jvmOptions);
            int replicationPort;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
                replicationPort = s.getLocalPort();
            }
            command.addAll(List.of("-jar", jar.toAbsolutePath().toString(), "serve", "--data-dir", dataDir.toString(),
                    "--http", "127.0.0.1:" + port, "--replication-listen", "127.0.0.1:" + replicationPort));
            command.addAll(serveArgs);
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.redirectErrorStream(true).redirectOutput(dataDir.resolveSibling("server.log").toFile());
            return awaitAnswer(pb.start(), new InetSocketAddress("127.0.0.1", port), "walden serve (see "
                    + dataDir.resolveSibling("server.log") + ")");
        }

        /** Waits until {@code p} answers {@code GET /ready} with 200 (up to a minute). */
        private static ServerProcess awaitAnswer(Process p, InetSocketAddress address, String what) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    throw new IllegalStateException(what + " exited with " + p.exitValue());
                }
                try (Socket s = new Socket()) {
                    s.connect(address, 200);
                    s.getOutputStream().write(get("/ready"));
                    readAnswer(s.getInputStream(), new byte[4096]);
                    return new ServerProcess(p, address);
                } catch (IOException notYet) {
                    Thread.sleep(50);
                }
            }
            p.destroyForcibly();
            throw new IllegalStateException(what + " did not become ready within 60 s");
        }

        /** The server's CPU time so far (user + system), from /proc; 0 where there is none. */
        long cpuNanos() {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
                return ticks * (1_000_000_000L / 100); // USER_HZ is 100 on Linux
            } catch (IOException | RuntimeException e) {
                return 0;
            }
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
