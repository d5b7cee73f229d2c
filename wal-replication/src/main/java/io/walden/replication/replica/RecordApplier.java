package io.walden.replication.replica;

import io.walden.core.WalRecord;

/**
 * What an embedding application does with each replicated record (PostgreSQL's redo): called on the replica's
 * receiver thread ({@code walden-receiver}), in LSN order, once the record is flushed on the replica. The
 * replica's applied position, which {@code REMOTE_APPLY} commits on the primary wait for, is the end of the last
 * record this returned for without throwing.
 *
 * <p>A record that throws is retried at the next batch or status interval, and nothing after it is applied
 * meanwhile: the applied position never passes a record the application did not take. The record's payload
 * view is valid only during the call.
 */
@FunctionalInterface
public interface RecordApplier {
    void apply(WalRecord record) throws Exception;

    /**
     * The replica's log was rewound to {@code lsn}: records from there on were removed, because the primary's
     * history says they were never its own (docs/replication.md, "Shipping before the flush"). Records the applier
     * took are never among them: a replica applies only what its primary had flushed, and refuses to rewind below
     * what it applied. For an application that keeps positions beyond what it applied. Does nothing by default.
     */
    default void rewound(long lsn) {
    }
}
