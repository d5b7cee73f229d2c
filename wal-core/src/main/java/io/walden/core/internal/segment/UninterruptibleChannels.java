package io.walden.core.internal.segment;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;

/**
 * File channels that an interrupt does not close. A {@code FileChannel} closes itself when the thread using it is
 * interrupted, and Walden's forces and writes run on the application's own threads (a committer that leads a
 * flush, a caller of {@code truncateBefore}): an application that interrupts one of them (a pool's
 * {@code shutdownNow}, {@code Future.cancel(true)}) would close the segment's channel under every other thread and
 * fail the log. The JDK's own {@code FileChannelImpl.setUninterruptible()} turns that off; it needs
 * {@code --add-exports=java.base/sun.nio.ch=ALL-UNNAMED}, which Chronicle requires anyway. Without it, a warning is
 * logged once and the channels stay interruptible.
 */
public final class UninterruptibleChannels {
    private static final Logger LOG = LoggerFactory.getLogger(UninterruptibleChannels.class);
    private static final Method SET_UNINTERRUPTIBLE = find();

    private UninterruptibleChannels() {
    }

    private static Method find() {
        try {
            Method m = Class.forName("sun.nio.ch.FileChannelImpl").getMethod("setUninterruptible");
            m.setAccessible(true);
            return m;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("File channels stay interruptible ({}): an application thread interrupted while it commits will "
                    + "fail the log; run with --add-exports=java.base/sun.nio.ch=ALL-UNNAMED", e.toString());
            return null;
        }
    }

    /** Opens a file channel that an interrupt of the thread using it does not close. */
    public static FileChannel open(Path path, OpenOption... options) throws IOException {
        FileChannel ch = FileChannel.open(path, options);
        if (SET_UNINTERRUPTIBLE != null) {
            try {
                SET_UNINTERRUPTIBLE.invoke(ch);
            } catch (ReflectiveOperationException | RuntimeException e) { // e.g. a channel of another file system
                LOG.debug("Cannot make {} uninterruptible: {}", path, e.toString());
            }
        }
        return ch;
    }
}
