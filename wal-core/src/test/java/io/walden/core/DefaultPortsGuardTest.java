package io.walden.core;

import org.junit.jupiter.api.Test;

import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** While tests run, Walden's default ports cannot be bound: a test that forgets to ask for a free port fails. */
class DefaultPortsGuardTest {
    @Test
    void noTestCanBindTheDefaultPorts() {
        for (int port : DefaultPortsGuard.DEFAULT_PORTS) {
            assertThatThrownBy(() -> {
                try (ServerSocket s = new ServerSocket()) {
                    s.bind(new InetSocketAddress("127.0.0.1", port));
                }
            }).as("port %d", port).isInstanceOf(BindException.class);
        }
    }
}
