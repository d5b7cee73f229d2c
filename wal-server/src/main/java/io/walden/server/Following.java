package io.walden.server;

import io.walden.core.Epoch;
import io.walden.replication.protocol.FrameDescriptor;
import io.walden.replication.replica.ReplicaLogs;
import io.walden.replication.replica.StoreReplicaClient;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * A server following its primary, as its status, its promotion and its group see it: the receiver of every log over one
 * connection ({@link StoreReplicaClient}). Positions and states are the log {@code default}'s.
 *
 * <p>Thread-safety: as the receiver's (every accessor from any thread; promote and close from any thread but its own).
 */
public interface Following extends AutoCloseable {

    InetSocketAddress primary();

    /** Whether the primary accepted this replica on the current connection and the log {@code default} streams. */
    boolean isStreaming();

    /** Why the primary refused this replica (or its log {@code default}) for good, or null. */
    String fatalError();

    /**
     * Why the primary refused this replica or any one of its logs for good, or null: a group's member that a log's
     * primary refuses takes no part in elections until rebuilt.
     */
    default String anyLogFatalError() {
        return fatalError();
    }

    /** Why the last connection attempt or connection failed, or null. */
    String lastError();

    /** The last failure of an application's applier, or null (there is none in the server). */
    String applyError();

    /** The end of the last record of the log {@code default} readers here may see. */
    long appliedLsn();

    long rewinds();

    /** Bytes fetched from the archive (restore-from) since the start, over every log. */
    long archiveBytes();

    /**
     * Makes every log followed a primary's (each begins its next epoch, numbered at least {@code atLeastNumber}; 0: the
     * next one) and accepts appends.
     *
     * @return the log {@code default}'s new epoch
     */
    Epoch promote(int atLeastNumber);

    /** Disconnects; the logs stay open and keep refusing appends. */
    @Override
    void close();

    /** The receiver of every log of the primary, into {@code logs}. */
    static Following of(StoreReplicaClient c, ReplicaLogs logs) {
        return new Following() {
            @Override
            public InetSocketAddress primary() {
                return c.primary();
            }

            @Override
            public boolean isStreaming() {
                return c.isStreaming(FrameDescriptor.DEFAULT_LOG);
            }

            @Override
            public String fatalError() {
                String all = c.fatalError();
                return all != null ? all : c.fatalError(FrameDescriptor.DEFAULT_LOG);
            }

            @Override
            public String anyLogFatalError() {
                String all = c.fatalError();
                if (all != null) {
                    return all;
                }
                for (String log : c.logs()) {
                    String refused = c.fatalError(log);
                    if (refused != null) {
                        return "log " + log + ": " + refused;
                    }
                }
                return null;
            }

            @Override
            public String lastError() {
                return c.lastError();
            }

            @Override
            public String applyError() {
                return null;
            }

            @Override
            public long appliedLsn() {
                return c.appliedLsn(FrameDescriptor.DEFAULT_LOG);
            }

            @Override
            public long rewinds() {
                return c.rewinds();
            }

            @Override
            public long archiveBytes() {
                return c.archiveBytes();
            }

            @Override
            public Epoch promote(int atLeastNumber) {
                Map<String, Epoch> epochs = new HashMap<>(c.promote(atLeastNumber));
                // A log held here that streamed nothing since the start (its primary gone before) was never followed:
                // it is promoted with the others, or it would refuse appends for good.
                if (!epochs.containsKey(FrameDescriptor.DEFAULT_LOG)) {
                    epochs.put(FrameDescriptor.DEFAULT_LOG, logs.root().replication().promote(atLeastNumber));
                }
                for (String name : logs.names()) {
                    if (!epochs.containsKey(name)) {
                        logs.log(name).ifPresent(wal -> epochs.put(name, wal.replication().promote(atLeastNumber)));
                    }
                }
                return epochs.get(FrameDescriptor.DEFAULT_LOG);
            }

            @Override
            public void close() {
                c.close();
            }
        };
    }
}
