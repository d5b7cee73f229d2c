package io.walden.server;

import io.walden.server.config.Setting;

import java.net.InetSocketAddress;

/**
 * An address the server cannot listen on, said as an operator reads it: the address, the setting that gave it and
 * what the operating system answered ({@code cannot listen on 127.0.0.1:7400 (--http): Address already in use}),
 * never the exception's class (Netty's epoll transport wraps the answer in {@code bind(..) failed with error(-98): ...}).
 *
 * <p>Thread-safety: stateless.
 */
final class BindFailure {
    private BindFailure() {
    }

    /**
     * @param what    what could not be done, e.g. {@code cannot listen for replicas on}
     * @param setting the setting that gave the address
     * @param cause   the failed bind
     */
    static IllegalStateException failed(String what, InetSocketAddress address, Setting<?> setting, Throwable cause) {
        return new IllegalStateException(what + " " + address.getAddress().getHostAddress() + ":" + address.getPort()
                + " (--" + setting.key() + "): " + osAnswer(cause), cause);
    }

    /** The operating system's answer in a bind's message: what follows its call and error number, if any. */
    private static String osAnswer(Throwable cause) {
        String message = String.valueOf(cause.getMessage());
        int call = message.lastIndexOf("): ");
        return call < 0 ? message : message.substring(call + 3);
    }
}
