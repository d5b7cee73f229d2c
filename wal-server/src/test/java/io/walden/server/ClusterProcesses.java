package io.walden.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The servers of one cluster ({@code walden serve --cluster zk://HOST:PORT/PATH --name NAME}, docs/cluster.md) as jar
 * processes on loopback, each with its own ports and data directory, kept across kills and restarts: a server killed
 * and started again comes back under its name, on its ports, with its files.
 *
 * <p>Thread-safety: {@link #nameAt} and {@link #all} from any thread; starting and killing from the test's thread.
 */
final class ClusterProcesses implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path work;
    private final String cluster;
    private final int sessionMs;
    private final Map<String, Server> servers = new ConcurrentSkipListMap<>();

    /**
     * @param zooKeeper ZooKeeper's HOST:PORT
     * @param sessionMs the ZooKeeper session timeout every server asks for ({@code --coordinator-session-timeout})
     */
    ClusterProcesses(Path work, String zooKeeper, int sessionMs) {
        this.work = work;
        this.cluster = "zk://" + zooKeeper + "/walden/killloop";
        this.sessionMs = sessionMs;
    }

    /** One server: its name, ports and directory stay; its process is the one running now, or the last one. */
    final class Server {
        final String name;
        /** Its data directory ({@code --data-dir}): a log's files are in {@code logs/LOG}. */
        final Path data;
        final int http;
        final int replication;
        /** The output of each of its processes so far, in order. */
        final List<Path> outputs = new ArrayList<>();
        private volatile ServerProcess process;
        private volatile long killedNanos;

        private Server(String name) throws IOException {
            this.name = name;
            this.data = work.resolve(name).resolve("data");
            this.http = ServerProcess.freePort();
            this.replication = ServerProcess.freePort();
        }

        /** Starts it (again) and returns once it answers {@code /ready}. */
        void start() throws Exception {
            Path dir = Files.createDirectories(work.resolve(name));
            ServerProcess started = ServerProcess.start(dir, data, http, "--cluster", cluster, "--name", name,
                    "--replication-listen", "127.0.0.1:" + replication,
                    "--coordinator-session-timeout", sessionMs + "ms", "--segment-size", Integer.toString(1 << 20));
            synchronized (outputs) {
                outputs.add(started.log);
            }
            process = started;
        }

        /** kill -9, and waits until the process is gone; returns when it was (System.nanoTime()). */
        long kill() throws InterruptedException {
            ServerProcess p = process;
            if (p != null && p.isAlive()) {
                p.kill();
                killedNanos = System.nanoTime();
            }
            return killedNanos;
        }

        /** SIGTERM: a clean stop; true when it exited as a stopped server does. */
        boolean terminate() throws InterruptedException {
            ServerProcess p = process;
            return p == null || !p.isAlive() || List.of(0, 143).contains(p.terminate());
        }

        boolean isAlive() {
            ServerProcess p = process;
            return p != null && p.isAlive();
        }

        /** Its process now (a dead one between a kill and a start). */
        ServerProcess process() {
            return process;
        }

        /** {@code http://127.0.0.1:PORT}, where clients reach it. */
        String base() {
            return "http://127.0.0.1:" + http;
        }

        List<Path> outputs() {
            synchronized (outputs) {
                return List.copyOf(outputs);
            }
        }
    }

    /** Adds a server by this name (not started). */
    Server add(String name) throws IOException {
        Server s = new Server(name);
        servers.put(name, s);
        return s;
    }

    Server get(String name) {
        Server s = servers.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no server " + name);
        }
        return s;
    }

    Collection<Server> all() {
        return servers.values();
    }

    /** The server that listens for HTTP at {@code uri}'s port, or the URI's authority when none does. */
    String nameAt(URI uri) {
        for (Server s : servers.values()) {
            if (s.http == uri.getPort()) {
                return s.name;
            }
        }
        return uri.getAuthority();
    }

    /**
     * Starts these servers at once, each on its own thread, and returns once each is ready: most of a start is the JVM's
     * own, and the servers of a cluster start together in practice (their joins are serialised by a lock in ZooKeeper).
     */
    void startTogether(List<String> names) throws Exception {
        ExecutorService starts = Executors.newFixedThreadPool(names.size());
        try {
            List<Future<?>> started = new ArrayList<>();
            for (String name : names) {
                started.add(starts.submit(() -> {
                    get(name).start();
                    return null;
                }));
            }
            for (Future<?> f : started) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Exception cause) {
                        throw cause;
                    }
                    throw new AssertionError(e.getCause());
                }
            }
        } finally {
            starts.shutdownNow();
        }
    }

    /**
     * {@code GET /admin/cluster}, from the first running server that answers it; null when none does (all between two
     * lives). Every server reads the leadership records from ZooKeeper for it.
     */
    JsonNode cluster() {
        for (Server s : servers.values()) {
            if (!s.isAlive()) {
                continue;
            }
            try {
                HttpResponse<String> r = s.process().get("/admin/cluster");
                if (r.statusCode() == 200) {
                    return JSON.readTree(r.body());
                }
            } catch (IOException e) {
                // stopping or not listening yet: the next one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }

    @Override
    public void close() throws InterruptedException {
        for (Server s : servers.values()) {
            s.kill();
        }
    }
}
