package io.walden.core;

/**
 * Appends are held back for a while because something the log must not outrun fell behind: the archive is more
 * than its cap of pending bytes behind (see {@link io.walden.core.archive.ArchiveConfig}). Nothing was appended;
 * retrying later succeeds once the cause clears, and the message says what it is.
 */
public class AppendsBlockedException extends WalException {
    private static final long serialVersionUID = 1L;

    public AppendsBlockedException(String message) {
        super(message);
    }
}
