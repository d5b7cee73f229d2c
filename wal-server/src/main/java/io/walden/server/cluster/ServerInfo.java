package io.walden.server.cluster;

import java.util.regex.Pattern;

/**
 * One server as the cluster knows it: its name ({@code --name}, the Helix instance name, unique in the cluster and
 * kept across restarts: a server that comes back under the same name gets its logs back) and the addresses the
 * other servers and the clients need, kept in its Helix {@code InstanceConfig} (refreshed at every join).
 *
 * @param name               the server's name in the cluster
 * @param httpAddress        HOST:PORT of its HTTP API (clients are redirected to a log's primary there)
 * @param replicationAddress HOST:PORT where it accepts replication connections (replicas of its logs connect there)
 */
public record ServerInfo(String name, String httpAddress, String replicationAddress) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

    public ServerInfo {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("server name '" + name + "': letters, digits, '_', '.' and '-' only");
        }
        if (httpAddress == null || replicationAddress == null) {
            throw new IllegalArgumentException("server '" + name + "' needs its HTTP and replication addresses");
        }
    }
}
