/**
 * The seam between a log and the code that replicates it: {@link io.walden.core.replication.ReplicatedLog}. For
 * wal-replication and wal-server only; applications use {@link io.walden.core.Wal} and its public API, and nothing
 * here is a stable API for them.
 */
package io.walden.core.replication;
