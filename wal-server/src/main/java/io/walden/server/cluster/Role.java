package io.walden.server.cluster;

/**
 * What a server is for one log, in Walden's words, with the Helix MasterSlave state each stands for.
 */
public enum Role {
    /** Helix MASTER: the one server that takes the log's appends. */
    PRIMARY("MASTER"),
    /** Helix SLAVE: follows the primary and may be promoted. */
    REPLICA("SLAVE"),
    /** Helix OFFLINE: holds (or is about to hold, or to drop) the log's files, takes no part. */
    OFFLINE("OFFLINE"),
    /** Helix ERROR: a transition failed here (the listener threw); Helix leaves it alone until reset. */
    ERROR("ERROR");

    private final String helixState;

    Role(String helixState) {
        this.helixState = helixState;
    }

    /** The Helix MasterSlave state this role stands for. */
    public String helixState() {
        return helixState;
    }

    /** The role of a Helix state; {@code DROPPED} and anything unknown read as {@link #OFFLINE}. */
    public static Role ofHelixState(String state) {
        for (Role role : values()) {
            if (role.helixState.equals(state)) {
                return role;
            }
        }
        return OFFLINE;
    }
}
