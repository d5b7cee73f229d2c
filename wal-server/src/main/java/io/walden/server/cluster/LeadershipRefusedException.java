package io.walden.server.cluster;

/** A change of a log's leadership record that the record does not allow (docs/cluster.md, "Who may lead a log"). */
public final class LeadershipRefusedException extends Exception {
    public LeadershipRefusedException(String message) {
        super(message);
    }
}
