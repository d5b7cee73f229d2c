/**
 * Walden's benchmarks: JMH microbenchmarks (append cost, allocation, a lone committer against a raw
 * write+force loop, Chronicle Queue as the peer) and {@link io.walden.bench.CommitLoad}, the load generator
 * that measures group commit with 1 to 256 committers. Run them with {@code wal-bench/run.sh}.
 */
package io.walden.bench;
