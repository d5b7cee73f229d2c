package io.walden.core;

import java.util.Locale;

/**
 * How far an append must get before it returns: PostgreSQL's {@code synchronous_commit} levels, with
 * the same names and meanings. See {@code docs/durability.md} for what each level survives.
 *
 * <p>With no synchronous replicas configured (no policy set on {@link io.walden.core.replication.ReplicatedLog#remoteWaits()}), the remote
 * levels behave as {@link #LOCAL}, as PostgreSQL's {@code on} does without a synchronous standby. With one,
 * a remote-level append waits for its local flush and then for the policy's confirmation at that level.
 */
public enum Durability {
    /** Returns once the record is in the WAL buffers. The background writer writes it into its file within
     *  {@code offWriteDelay} (from then on a crash of the JVM cannot lose it) and forces it within {@code writerDelay}
     *  (from then on a crash of the machine cannot). */
    OFF,
    /** Returns once a local force covering the record has completed. */
    LOCAL,
    /** LOCAL, and the synchronous replicas have written the record (to their OS, not yet flushed). */
    REMOTE_WRITE,
    /** LOCAL, and the synchronous replicas have flushed the record. The default. */
    ON,
    /** LOCAL, and the synchronous replicas have applied the record (visible to their readers). */
    REMOTE_APPLY;

    private static final Durability[] VALUES = values();

    /** True for every level that waits for a local force. */
    public boolean waitsForLocalFlush() {
        return this != OFF;
    }

    /** True for the levels that wait for the synchronous replicas (when a policy is set) after the local flush. */
    public boolean waitsForReplicas() {
        return this == REMOTE_WRITE || this == ON || this == REMOTE_APPLY;
    }

    /** The PostgreSQL spelling: {@code off}, {@code local}, {@code remote_write}, {@code on}, {@code remote_apply}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a PostgreSQL spelling, case-insensitively. */
    public static Durability parse(String text) {
        if (text != null) {
            String s = text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
            for (Durability d : VALUES) {
                if (d.name().equals(s)) {
                    return d;
                }
            }
        }
        throw new IllegalArgumentException("unknown durability '" + text
                + "' (expected one of off, local, remote_write, on, remote_apply)");
    }
}
