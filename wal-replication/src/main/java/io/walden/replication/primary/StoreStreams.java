package io.walden.replication.primary;

import io.netty.channel.Channel;
import io.walden.core.WalClosedException;
import io.walden.replication.protocol.Frame;
import io.walden.replication.protocol.FrameDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A version 6 connection's logs (docs/replication-protocol.md, "Version 6"): numbers them in a catalog, tells the
 * replica of every log created, deleted or changed on the primary while it is connected, and runs one
 * {@link LogStream} per log the replica started, each through a {@link LogLink} with a window of
 * {@link FrameDescriptor#STREAM_WINDOW}.
 *
 * <p>Thread-safety: the connection's event loop; the catalog's changes ({@link PrimaryLogs.Listener}) are handed to it.
 */
final class StoreStreams implements PrimaryLogs.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicationServer.class);

    /**
     * One log as this connection numbers it (its endpoint replaced when the log is reopened: the same log, the same
     * number), and its stream while the replica has one started.
     */
    private static final class Numbered {
        final int number;
        LogEndpoint log;
        LogStream stream;
        /** A Start that came while the log was closed (reopening, or deleted): answered once it is reopened. */
        Frame.Start held;

        Numbered(int number, LogEndpoint log) {
            this.number = number;
            this.log = log;
        }
    }

    private final Channel channel;
    private final PrimaryLogs logs;
    private final LogStream.Settings settings;
    private final String name;
    private final byte[] secret;
    private final Map<Integer, Numbered> byNumber = new HashMap<>();
    private final Map<LogEndpoint, Numbered> byLog = new HashMap<>();
    /** The next log number: a counter, so that no number is used twice on this connection. */
    private int next = FrameDescriptor.DEFAULT_LOG_NUMBER;
    private boolean closed;

    /** @param name the replica's name and {@code secret} what its hello carried, used for every log's handshake */
    StoreStreams(Channel channel, PrimaryLogs logs, LogStream.Settings settings, String name, byte[] secret) {
        this.channel = channel;
        this.logs = logs;
        this.settings = settings;
        this.name = name;
        this.secret = secret;
    }

    /** Lists the catalog ({@code default} first, numbered 0), then says it is complete. */
    void begin() {
        List<LogEndpoint> all = logs.subscribe(this);
        for (LogEndpoint log : all) {
            announce(log);
        }
        channel.writeAndFlush(new Frame.CatalogComplete(all.size()));
        LOG.info("Replica '{}' connected from {} for {} log(s) (protocol version 6)", name, channel.remoteAddress(), all.size());
    }

    private void announce(LogEndpoint log) {
        Numbered n = new Numbered(next++, log);
        byNumber.put(n.number, n);
        byLog.put(log, n);
        entry(n);
    }

    private void entry(Numbered n) {
        try {
            channel.writeAndFlush(new Frame.CatalogEntry(n.number, n.log.wal.status().logId(),
                    n.log.wal.config().segmentSize(), n.log.name, logs.settingsOf(n.log)));
        } catch (WalClosedException e) {
            // deleted meanwhile: its drop follows
        }
    }

    @Override
    public void added(LogEndpoint log) {
        onLoop(() -> announce(log));
    }

    @Override
    public void removed(LogEndpoint log) {
        onLoop(() -> {
            Numbered n = byLog.remove(log);
            if (n != null) {
                byNumber.remove(n.number);
                if (n.stream != null) {
                    n.stream.close();
                }
                channel.writeAndFlush(new Frame.CatalogDrop(n.number));
            }
        });
    }

    @Override
    public void changed(LogEndpoint log) {
        onLoop(() -> {
            Numbered n = byLog.get(log);
            if (n != null) {
                entry(n);
            }
        });
    }

    /**
     * The log was reopened with new settings: the same number serves it, its entry is sent again (the same log id: its
     * settings changed), and the stream on the closed log ends with a Restart, so that the replica starts it again from
     * its own end (docs/replication-protocol.md, "Log numbers and the catalog").
     */
    @Override
    public void reopened(LogEndpoint old, LogEndpoint reopened) {
        onLoop(() -> {
            Numbered n = byLog.remove(old);
            if (n == null) {
                return;
            }
            n.log = reopened;
            byLog.put(reopened, n);
            entry(n);
            if (n.stream != null) {
                n.stream.restart();
            } else if (n.held != null) {
                start(n, n.held); // the replica started it again while it was closed
            }
        });
    }

    private void onLoop(Runnable task) {
        channel.eventLoop().execute(() -> {
            if (!closed && channel.isActive()) {
                task.run();
            }
        });
    }

    /**
     * A frame about one log. Frames about a number dropped since are ignored (they crossed the drop on the wire).
     *
     * @return null, or why the frame is a protocol error
     */
    String onFrame(Frame.OnLog frame) {
        if (frame.log() >= next) {
            return "a frame about log number " + frame.log() + ", which the catalog never named";
        }
        Numbered n = byNumber.get(frame.log());
        if (n == null) {
            return null;
        }
        if (frame.frame() instanceof Frame.Start start) {
            if (n.stream != null) {
                n.stream.close(); // it ended (its Restart crossed this Start) or the replica starts it again
                n.stream = null;
            }
            if (n.log.wal.isClosed()) {
                n.held = start; // reopened (its settings changed) or deleted: answered when the catalog says which
                return null;
            }
            start(n, start);
            return null;
        }
        if (frame.frame() instanceof Frame.End) {
            n.held = null; // the replica let the log go: its stream ends here, as if that log alone disconnected
            if (n.stream != null) {
                n.stream.close();
                n.stream = null;
            }
            return null;
        }
        if (frame.frame() instanceof Frame.Status status) {
            if (n.stream != null && n.stream.accepted()) {
                n.stream.status(status);
            }
            return null; // a status can cross the stream's end
        }
        return "unexpected " + frame.frame().getClass().getSimpleName() + " frame about a log";
    }

    /** Answers the replica's Start of log {@code n}, as a version 5 hello of that log is answered. */
    private void start(Numbered n, Frame.Start start) {
        n.held = null;
        LogStream[] self = new LogStream[1];
        LogStream stream = new LogStream(n.log, settings, new LogLink(channel, n.number, n.log.name,
                () -> onLoop(() -> ended(n, self[0]))));
        self[0] = stream;
        n.stream = stream;
        try {
            stream.open(new Frame.Hello(FrameDescriptor.STORE_PROTOCOL_VERSION, start.logId(), start.epoch(),
                    start.epochStartLsn(), start.startLsn(), name, secret), FrameDescriptor.STREAM_WINDOW);
        } catch (WalClosedException e) { // deleted while it was answered: its drop follows; the connection goes on
            stream.close();
            new LogLink(channel, n.number, n.log.name, () -> { }).end(new Frame.Error(Frame.Error.NOT_A_PRIMARY,
                    "log '" + n.log.name + "' is closed here; retry later"));
        }
    }

    private void ended(Numbered n, LogStream stream) {
        stream.close();
        if (n.stream == stream) {
            n.stream = null;
        }
    }

    /** The connection drained: every log's sender held back goes on. */
    void writable() {
        for (Numbered n : byNumber.values()) {
            if (n.stream != null) {
                n.stream.writable();
            }
        }
    }

    /** The connection ended: no more catalog changes, every stream stops. */
    void close() {
        closed = true;
        logs.unsubscribe(this);
        for (Numbered n : byNumber.values()) {
            if (n.stream != null) {
                n.stream.close();
            }
        }
    }
}
