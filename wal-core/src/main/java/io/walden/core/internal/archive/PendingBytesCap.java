package io.walden.core.internal.archive;

import io.walden.core.Lsn;
import io.walden.core.SegmentInfo;
import io.walden.core.archive.ArchiveConfig;
import io.walden.core.archive.ArchiveTarget;
import io.walden.core.internal.segment.SegmentFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;

/**
 * The cap on flushed bytes not archived ({@link ArchiveConfig#maxPendingBytes()}, archive-max-pending-bytes). Past it
 * a primary's appends are refused ({@code BLOCK}) until the archive is back under it, or the oldest sealed segments are
 * given up, marked dropped, until it is ({@code DROP_ARCHIVE}); a replica's log is never held to it. It is applied on
 * the archiver's turns only, so the cap can be passed by what is appended between two of them.
 *
 * <p>Thread-safety: the archiver's thread {@link #admit}s; {@link #blocking()} may be read from any thread.
 */
public final class PendingBytesCap {
    /** The archiver's messages, wherever the code is that logs them. */
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);

    private final ArchivedLog log;
    private final ArchiveConfig config;
    private final ArchiveTarget target;
    private final ArchiveStatus status;
    private final ArchiveProgress progress;
    private volatile boolean blocked; // written by the archiver, read by blocking()

    public PendingBytesCap(ArchivedLog log, ArchiveConfig config, ArchiveStatus status, ArchiveProgress progress) {
        this.log = log;
        this.config = config;
        this.target = config.target();
        this.status = status;
        this.progress = progress;
    }

    /** True while appends are refused because the archive is too far behind. */
    public boolean blocking() {
        return blocked;
    }

    /** Applies the cap on pending bytes. */
    public void admit(List<SegmentInfo> segments) throws IOException {
        long lag = progress.lagBytes();
        long cap = config.maxPendingBytes();
        if (lag > cap && log.acceptsAppends()) {
            if (config.whenFull() == ArchiveConfig.WhenFull.BLOCK) {
                if (!blocked) {
                    blocked = true;
                    String lastError = progress.lastError();
                    String reason = "the archive " + target.uri() + " is " + lag + " bytes behind, more than the "
                            + cap + " allowed (archive-max-pending-bytes); appends resume when it catches up"
                            + (lastError == null ? "" : "; last error: " + lastError);
                    log.blockAppends(reason);
                    LOG.error("Refusing appends to {}: {}", log.directory(), reason);
                }
                return;
            }
            long flushed = log.flushedLsn();
            for (SegmentInfo s : segments) {
                if (progress.lagBytes() <= cap || flushed < s.endLsn()) {
                    break;
                }
                if (!status.isSettled(s.startLsn())) {
                    status.markDropped(s.startLsn());
                    progress.segmentDropped();
                    LOG.error("Gave up archiving segment {} of {}: the archive is {} bytes behind, more than the {} "
                                    + "allowed, and the policy is drop-archive; the archive now has a gap there",
                            SegmentFiles.name(s.startLsn()), log.directory(), progress.lagBytes(), cap);
                    progress.refresh(segments, flushed);
                }
            }
        } else if (blocked) {
            blocked = false;
            log.blockAppends(null);
            LOG.info("Accepting appends to {} again: the archive caught up to {} ({} bytes behind)", log.directory(),
                    Lsn.format(progress.archivedLsn()), lag);
        }
    }
}
