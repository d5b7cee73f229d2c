package io.walden.server.cluster;

import io.walden.core.Wal;

import java.util.Optional;
import java.util.Set;

/**
 * The named logs a cluster server holds, as {@link PlacedLogs} creates, finds and deletes them: the server's log
 * catalog (its meters, handlers and replication endpoint told of each change), or a bare store in tests.
 */
public interface HeldLogs {
    /** Every named log held here. */
    Set<String> names();

    /** Log {@code name}, open, if held here. */
    Optional<Wal> log(String name);

    /** Creates log {@code name} with the server's settings (its first primary: no server led it before). */
    Wal create(String name);

    /** Deletes this server's copy of log {@code name} and its files. */
    void delete(String name);
}
