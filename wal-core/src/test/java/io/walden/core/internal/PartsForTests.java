package io.walden.core.internal;

import io.walden.core.internal.commit.WalBuffers;
import io.walden.core.internal.record.DictionaryTrainer;
import io.walden.core.internal.segment.SegmentPreparer;
import io.walden.core.internal.segment.SegmentRegistry;

/**
 * The parts behind a log that tests look at directly (a segment's mapping, the preparer's lock, the WAL buffers' address,
 * the idle ring, the trained dictionary), which {@link WalParts} keeps to itself: reached from this package, never from
 * the main code.
 */
public final class PartsForTests {
    private PartsForTests() {
    }

    public static SegmentRegistry registry(WalParts parts) {
        return parts.registry();
    }

    /** Its monitor is what the preparer holds for each step (SegmentPreparation holds it to keep it from one). */
    public static SegmentPreparer preparer(WalParts parts) {
        return parts.preparer();
    }

    public static WalBuffers ring(WalParts parts) {
        return parts.ring();
    }

    public static IdleRing idleRing(WalParts parts) {
        return parts.idleRing();
    }

    public static DictionaryTrainer dictionaries(WalParts parts) {
        return parts.dictionaries();
    }
}
