package io.walden.core;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Holds Walden's default ports, 7400 (HTTP) and 7401 (replication), for as long as a test run lasts, in every module
 * whose tests see wal-core's test jar (registered in META-INF/services as a JUnit Platform launcher session listener,
 * which surefire and failsafe both start). A test that binds either, in this JVM or in a child process it starts,
 * fails at once with "address in use", as it would on a machine where a Walden server is running; a test that
 * connects to one reaches a socket that answers nothing. So a test that forgets to ask for a free port fails on every
 * run, not only on a machine where it collides. A port another process holds already (a Walden server running here)
 * is left as it is: it guards the same.
 *
 * <p>Thread-safety: the launcher calls it on one thread, at the start and the end of the session.
 */
public final class DefaultPortsGuard implements LauncherSessionListener {
    public static final int[] DEFAULT_PORTS = {7400, 7401};

    private final List<ServerSocket> held = new ArrayList<>();

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        for (int port : DEFAULT_PORTS) {
            try {
                ServerSocket s = new ServerSocket();
                s.bind(new InetSocketAddress(port)); // every address: a bind to 127.0.0.1:port collides too
                held.add(s);
            } catch (IOException e) {
                // Held by another process (a server running on this machine): tests that bind it fail all the same.
            }
        }
    }

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        for (ServerSocket s : held) {
            try {
                s.close();
            } catch (IOException e) {
                // closing at the end of the run: nothing to do
            }
        }
        held.clear();
    }
}
