/**
 * Walden's public API: a durable write-ahead log in one directory. Start at {@link io.walden.core.Wal}: open one with
 * a {@link io.walden.core.WalConfig}, append with a {@link io.walden.core.Durability} (PostgreSQL's
 * {@code synchronous_commit} levels), read with a {@link io.walden.core.WalReader} (each {@link io.walden.core.WalRecord}
 * at an {@link io.walden.core.Lsn}), and keep consumers' positions in {@link io.walden.core.Cursors}.
 *
 * <ul>
 *   <li>Appending: {@link io.walden.core.Wal#append(byte[], Durability)}, {@link io.walden.core.Wal#appendAsync},
 *       zero-copy claims ({@link io.walden.core.WalClaim}), and {@link io.walden.core.NonWaitingAppends} for event loops
 *       ({@link io.walden.core.AppendCompletion}).</li>
 *   <li>What operators read: {@link io.walden.core.WalStatus} ({@link io.walden.core.RecoveryReport},
 *       {@link io.walden.core.SegmentInfo}, the {@link io.walden.core.EpochHistory}), and
 *       {@link io.walden.core.Wal#meterBinder()}.</li>
 *   <li>Configuration: {@link io.walden.core.WalConfig} and its builder; {@link io.walden.core.SyncMethod},
 *       {@link io.walden.core.Compression}.</li>
 *   <li>Failures are exceptions of this package, all {@link io.walden.core.WalException}s but the argument checks.</li>
 * </ul>
 *
 * <p>Beside it: {@code io.walden.core.replication} (the handle replication drives, {@link io.walden.core.Wal#replication()})
 * and {@code io.walden.core.archive} (continuous archiving and restore). Everything under {@code io.walden.core.internal}
 * is the implementation: public only because Java packages have no friends, never for applications, and free to
 * change (docs/glossary.md names its parts). Threads, formats and guarantees: docs/durability.md, docs/format.md.
 */
package io.walden.core;
