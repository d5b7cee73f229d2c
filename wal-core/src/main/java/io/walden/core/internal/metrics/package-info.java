/** Micrometer meters for a {@link io.walden.core.Wal}; see {@link io.walden.core.internal.metrics.WalMetrics} for the names. */
package io.walden.core.internal.metrics;
