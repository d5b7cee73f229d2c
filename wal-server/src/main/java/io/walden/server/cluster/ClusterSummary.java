package io.walden.server.cluster;

import java.util.List;

/**
 * The cluster at a glance (what {@code GET /admin/cluster} is to show): its servers, live or known, and how many
 * logs each leads and follows now.
 *
 * @param cluster    the cluster's name
 * @param controller the server running the Helix controller now, or {@code null} while none does
 * @param logs       the logs in the cluster
 * @param servers    every known server, by name
 */
public record ClusterSummary(String cluster, String controller, int logs, List<Server> servers) {

    public ClusterSummary {
        servers = List.copyOf(servers);
    }

    /**
     * @param name               the server's name
     * @param live               whether it is connected now
     * @param httpAddress        its HTTP address as it registered it
     * @param replicationAddress its replication address as it registered it
     * @param primaries          the logs it leads now
     * @param replicas           the logs it follows now
     * @param errors             the logs in ERROR on it (a refused or failed transition)
     * @param draining           whether it is being drained ({@code POST /admin/drain}): Helix places nothing on it and
     *                           moves what it holds elsewhere
     */
    public record Server(String name, boolean live, String httpAddress, String replicationAddress,
                         int primaries, int replicas, int errors, boolean draining) {

        /** The copies of logs it holds now, in any role. */
        public int copies() {
            return primaries + replicas + errors;
        }
    }

    public long liveServers() {
        return servers.stream().filter(Server::live).count();
    }
}
