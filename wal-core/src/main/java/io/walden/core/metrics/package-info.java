/** Micrometer meters for a {@link io.walden.core.Wal}; see {@link io.walden.core.metrics.WalMetrics} for the names. */
package io.walden.core.metrics;
