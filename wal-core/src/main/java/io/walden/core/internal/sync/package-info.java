/**
 * Sync strategies over {@code FileChannel.force} and DSYNC writes, and the background writer that bounds the
 * loss window of {@code OFF} appends. A {@link io.walden.core.internal.sync.SyncStrategy} other than a
 * {@link io.walden.core.SyncMethod}'s is internal too: a store's journal installs one, and tests inject faults through
 * one ({@link io.walden.core.internal.sync.SyncOverride}); an application chooses a sync method.
 */
package io.walden.core.internal.sync;
