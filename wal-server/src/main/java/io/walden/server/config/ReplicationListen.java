package io.walden.server.config;

import java.net.InetSocketAddress;

/**
 * The {@code replication-listen} setting: an address to accept replicas on, or {@code none} (no listener: a standalone
 * primary then needs no replication secret).
 *
 * @param address where to listen, or null for none
 */
public record ReplicationListen(InetSocketAddress address) {
    static final String NONE = "none";

    static ReplicationListen parse(String text) {
        return new ReplicationListen(NONE.equals(text.trim()) ? null : Values.address(text));
    }
}
