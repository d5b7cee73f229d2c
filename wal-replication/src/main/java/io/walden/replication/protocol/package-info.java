/**
 * The replication wire protocol: frames, their layout and the Netty codec. Specified in
 * {@code docs/replication-protocol.md}.
 */
package io.walden.replication.protocol;
