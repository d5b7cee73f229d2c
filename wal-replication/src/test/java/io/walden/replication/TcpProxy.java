package io.walden.replication;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy between a replica and its primary for tests and benchmarks: adds a one-way delay to every byte in
 * both directions (a long link: a round trip costs twice it), or black-holes the link (a partition: nothing is
 * forwarded either way, and since nothing is read either, TCP pushes back on both ends, as on a dead route)
 * until healed. Plain threads: two per direction per connection.
 *
 * <p>Thread-safety: {@link #delayMicros}, {@link #blackhole} and {@link #close} from any thread.
 */
public final class TcpProxy implements AutoCloseable {
    private static final int CHUNK = 64 << 10;

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile long delayNanos;
    /** The bytes forwarded from the target to its clients (a primary's to its replicas), every connection's. */
    private final AtomicLong bytesDown = new AtomicLong();
    /** Written under {@link #healing} (whose waiters it wakes); read without it on the pipes' fast path. */
    private volatile boolean blackholed;
    private volatile boolean closed;
    /** Where the pipes wait while the link is blackholed: {@link #blackhole} and {@link #close} wake them. */
    private final Object healing = new Object();

    private TcpProxy(InetSocketAddress target, long oneWayDelayMicros) throws IOException {
        this.target = target;
        this.delayNanos = TimeUnit.MICROSECONDS.toNanos(oneWayDelayMicros);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy on a free loopback port forwarding to {@code target} with the given one-way delay. */
    public static TcpProxy start(InetSocketAddress target, long oneWayDelayMicros) throws IOException {
        return new TcpProxy(target, oneWayDelayMicros);
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(listener.getInetAddress(), listener.getLocalPort());
    }

    /** The bytes forwarded so far from the target to its clients (what a primary sent its replicas). */
    public long bytesDown() {
        return bytesDown.get();
    }

    /** Sets the one-way delay of bytes read from now on. */
    public void delayMicros(long oneWay) {
        this.delayNanos = TimeUnit.MICROSECONDS.toNanos(oneWay);
    }

    /** Stops (true) or resumes (false) forwarding in both directions; connections stay open. */
    public void blackhole(boolean on) {
        synchronized (healing) {
            this.blackholed = on;
            healing.notifyAll();
        }
    }

    /** Closes every proxied connection (both ends see a reset link), keeping the listener. */
    public void cut() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                try {
                    server.connect(target, 5000);
                } catch (IOException e) {
                    closeQuietly(client);
                    continue;
                }
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pipe(client, server, "up");
                pipe(server, client, "down");
            } catch (IOException e) {
                if (!closed) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
            }
        }
    }

    private record Chunk(long dueNanos, byte[] bytes, int length) {
    }

    private static final Chunk END = new Chunk(0, new byte[0], -1);

    /** Reads from {@code from}, delays, writes to {@code to}; either side's end closes both. */
    private void pipe(Socket from, Socket to, String direction) {
        BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(1024);
        Thread reader = new Thread(() -> {
            try (InputStream in = from.getInputStream()) {
                byte[] buffer = new byte[CHUNK];
                while (true) {
                    awaitHealed();
                    int n = in.read(buffer);
                    if (n < 0) {
                        break;
                    }
                    // A copy of what was read, not a fresh 64 KiB buffer per read: at thousands of small reads a
                    // second that garbage would put GC pauses into what a benchmark through this proxy measures.
                    queue.put(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n), n));
                }
            } catch (IOException | InterruptedException e) {
                // the link ended
            } finally {
                queue.offer(END);
            }
        }, "tcp-proxy-read-" + direction);
        Thread writer = new Thread(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Chunk c = queue.take();
                    if (c == END) {
                        break;
                    }
                    long wait;
                    while ((wait = c.dueNanos() - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    awaitHealed();
                    out.write(c.bytes(), 0, c.length());
                    out.flush();
                    if (direction.equals("down")) {
                        bytesDown.addAndGet(c.length());
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the link ended
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-write-" + direction);
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private void awaitHealed() throws InterruptedException {
        if (!blackholed) {
            return;
        }
        synchronized (healing) {
            while (blackholed && !closed) {
                healing.wait();
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        synchronized (healing) {
            healing.notifyAll();
        }
        closeQuietly2(listener);
        cut();
    }

    private static void closeQuietly2(ServerSocket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
