/**
 * How a {@link io.walden.core.Wal} is put together: its parts ({@code WalParts}), the write and read paths, the
 * replica's side of replication ({@code WalReplication}, {@code LogRewind}) and the meters' sources. Internal to
 * Walden: public only so that the facades in {@code io.walden.core} can reach it; not an API, free to change.
 * docs/glossary.md names the parts and docs/durability.md the threads that own them.
 */
package io.walden.core.internal;
