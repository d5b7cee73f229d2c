/**
 * Walden's own threads: how they are named, run and stopped ({@code WaldenThreads}, {@code Loop},
 * {@code LoopRunner}). Every background thread of wal-core is started here so that its owner and its exit are
 * plain. Internal to Walden; {@code WaldenThreads} is also used by wal-replication and wal-server.
 */
package io.walden.core.internal.thread;
