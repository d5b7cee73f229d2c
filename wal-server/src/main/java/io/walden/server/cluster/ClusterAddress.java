package io.walden.server.cluster;

import io.walden.server.group.CoordinatorUri;

import java.util.regex.Pattern;

/**
 * Where a cluster lives: {@code zk://HOST:PORT[,HOST:PORT...]/PATH}. Helix keeps a cluster in the node {@code /NAME} of
 * its ZooKeeper connection and takes no deeper path, so the last element of PATH names the Helix cluster and the
 * elements before it become the connection's chroot: {@code zk://zk1:2181/walden/prod} is the cluster {@code prod},
 * which Helix reaches as {@code zk1:2181/walden} + {@code /prod}. A PATH of one element, {@code zk://zk1:2181/prod},
 * has no chroot: the cluster is {@code /prod} at the root of the ensemble.
 *
 * <p>ZooKeeper refuses to work under a chroot node that does not exist; {@link ClusterMember#join} creates it before
 * Helix connects. The cluster name is a ZooKeeper node name and part of Helix's JMX names, so it is limited to
 * letters, digits, {@code _}, {@code .} and {@code -}.
 *
 * @param connectString ZooKeeper's hosts, e.g. {@code zk1:2181,zk2:2181}
 * @param chroot        the path above the cluster, e.g. {@code /walden}; empty for none
 * @param clusterName   the Helix cluster, e.g. {@code prod}
 */
public record ClusterAddress(String connectString, String chroot, String clusterName) {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]+");

    /** @throws IllegalArgumentException when {@code text} is not {@code zk://HOST:PORT[,...]/PATH} or names no valid cluster */
    public static ClusterAddress parse(String text) {
        CoordinatorUri uri = CoordinatorUri.parse(text);
        String path = uri.path();
        int last = path.lastIndexOf('/');
        String name = path.substring(last + 1);
        if (!NAME.matcher(name).matches() || name.equals(".") || name.equals("..")) {
            throw new IllegalArgumentException("cluster '" + text + "': the last element of the path, '" + name
                    + "', names the cluster: letters, digits, '_', '.' and '-' only");
        }
        return new ClusterAddress(uri.connectString(), path.substring(0, last), name);
    }

    /** The connect string Helix is given: the hosts and the chroot. */
    public String helixZkAddress() {
        return connectString + chroot;
    }

    /** The cluster's node seen from the root of the ensemble (without the chroot), e.g. {@code /walden/prod}. */
    public String clusterPath() {
        return chroot + "/" + clusterName;
    }

    @Override
    public String toString() {
        return "zk://" + connectString + clusterPath();
    }
}
