package io.walden.server.group;

/**
 * Where a replica group keeps its state: {@code zk://HOST:PORT[,HOST:PORT...]/PATH}, the ZooKeeper ensemble and
 * the group's root node (every member of one group names the same path; two groups on one ensemble name two).
 *
 * @param connectString ZooKeeper's connect string, e.g. {@code zk1:2181,zk2:2181}
 * @param path          the group's root node, e.g. {@code /walden/orders}
 */
public record CoordinatorUri(String connectString, String path) {

    /** @throws IllegalArgumentException when {@code text} is not {@code zk://HOST:PORT[,...]/PATH} */
    public static CoordinatorUri parse(String text) {
        String prefix = "zk://";
        if (text == null || !text.startsWith(prefix)) {
            throw new IllegalArgumentException("coordinator is zk://HOST:PORT[,HOST:PORT...]/PATH, not '" + text + "'");
        }
        String rest = text.substring(prefix.length());
        int slash = rest.indexOf('/');
        if (slash <= 0 || slash == rest.length() - 1) {
            throw new IllegalArgumentException("coordinator '" + text + "' needs hosts and a path: zk://HOST:PORT[,HOST:PORT...]/PATH");
        }
        String hosts = rest.substring(0, slash);
        for (String host : hosts.split(",")) {
            int colon = host.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("coordinator '" + text + "': '" + host + "' is not HOST:PORT");
            }
            try {
                int port = Integer.parseInt(host.substring(colon + 1));
                if (port < 1 || port > 65535) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("coordinator '" + text + "': bad port in '" + host + "'");
            }
        }
        String path = rest.substring(slash);
        if (path.endsWith("/") || path.contains("//")) {
            throw new IllegalArgumentException("coordinator '" + text + "': the path '" + path + "' has an empty element");
        }
        return new CoordinatorUri(hosts, path);
    }

    @Override
    public String toString() {
        return "zk://" + connectString + path;
    }
}
