/**
 * Sync strategies over {@code FileChannel.force} and DSYNC writes, and the background writer that bounds the
 * loss window of {@code OFF} appends. {@link io.walden.core.internal.sync.SyncStrategy} is a public extension
 * point (for instrumentation and fault injection); everything else here is internal.
 */
package io.walden.core.internal.sync;
