/**
 * The transport replication runs on: which event-loop group its channels use and, matching it, which channel classes
 * (NIO, epoll, io_uring). See {@link io.walden.replication.transport.EventLoops}.
 */
package io.walden.replication.transport;
