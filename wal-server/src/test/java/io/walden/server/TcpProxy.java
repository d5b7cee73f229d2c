package io.walden.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP forwarder on loopback that a test can cut: while cut, bytes are swallowed in both directions and new
 * connections are accepted but lead nowhere, with no reset or close to tell either side (a silent partition, as a
 * dropped route or a dead switch makes); healing closes every connection, so that both sides start again.
 */
final class TcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile boolean closed;

    TcpProxy(int targetPort) throws IOException {
        this.target = targetPort;
        this.listener = new ServerSocket();
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        Thread acceptor = new Thread(this::accept, "tcp-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Swallows every byte from now on, silently. */
    void cut() {
        cut = true;
    }

    /** Forwards again; the connections of before and during the cut are closed. */
    void heal() {
        for (Socket s : open) {
            closeQuietly(s);
        }
        open.clear();
        cut = false;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    open.add(client); // held open, leading nowhere
                    swallow(client);
                    continue;
                }
                Socket server = new Socket("127.0.0.1", target);
                open.add(client);
                open.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (!cut) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // one side closed or the proxy was cut
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void swallow(Socket s) {
        Thread t = new Thread(() -> {
            try (InputStream in = s.getInputStream()) {
                in.transferTo(OutputStream.nullOutputStream());
            } catch (IOException e) {
                // closed by heal()
            }
        }, "tcp-proxy-swallow");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        heal();
        listener.close();
    }
}
