package io.walden.replication.replica;

import io.walden.core.Lsn;
import io.walden.core.Wal;
import io.walden.core.WalReader;
import io.walden.core.WalRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replica's applied position, and the application's {@link RecordApplier} when there is one: hands it every record
 * its readers may see (flushed here and reported flushed by the primary), in order, retrying a record that failed
 * rather than skipping it. Without an applier, applied is what readers see.
 *
 * <p>Thread-safety: {@link #advance}, {@link #rewound} and {@link #close} on the receiver thread only; the
 * getters from any thread.
 */
final class ApplierDriver {
    private static final Logger LOG = LoggerFactory.getLogger(ApplierDriver.class);

    private final Wal wal;
    private final RecordApplier applier;
    /** Reads flushed records for the applier; the receiver thread's alone. */
    private WalReader reader;
    /** The end of the last record the applier took (or what readers see when there is none). */
    private volatile long applied;
    private volatile String error;

    ApplierDriver(Wal wal, RecordApplier applier, long fromLsn) {
        this.wal = wal;
        this.applier = applier;
        this.reader = applier == null ? null : wal.reader(fromLsn, WalReader.Visibility.FLUSHED);
        this.applied = applier == null ? wal.flushedLsn() : fromLsn;
    }

    long applied() {
        return applied;
    }

    /** The last failure of the applier (its record is retried), or null once it succeeds again. */
    String error() {
        return error;
    }

    /**
     * Applies what readers may now see: flushed here (up to {@code flushed}, the position the caller reports with it,
     * so that a report never says applied beyond flushed) and at the primary.
     */
    void advance(long flushed) {
        if (applier == null) {
            applied = Math.min(flushed, wal.readLimit());
            return;
        }
        WalRecord record = null;
        try {
            while (true) {
                record = null; // a failing next() must not retry the record before it
                record = reader.next();
                if (record == null) {
                    break;
                }
                applier.apply(record);
                applied = record.nextLsn();
            }
            applied = Math.max(applied, reader.position());
            error = null;
        } catch (Exception e) {
            String at = record == null ? Lsn.format(reader.position()) : Lsn.format(record.lsn());
            if (error == null) {
                LOG.error("The applier failed on the record at {}; it will be retried, and nothing after it is applied meanwhile", at, e);
            }
            error = "the applier failed on the record at " + at + ": " + e;
            if (record != null) {
                reader.close(); // a reader only moves forward: reopen one on the failed record, the next one tried
                reader = wal.reader(record.lsn(), WalReader.Visibility.FLUSHED);
            }
        }
    }

    /**
     * The log is about to be rewound to {@code to}.
     *
     * @throws IllegalStateException when the applier already took records beyond it (the replica must be rebuilt:
     *                               the application's state holds what the primary lacks)
     */
    void checkRewind(long to) {
        if (applier != null && applied > to) {
            throw new IllegalStateException("the primary's history ends this replica's epoch at " + Lsn.format(to)
                    + ", but the application already applied records up to " + Lsn.format(applied));
        }
    }

    /** The log was rewound to {@code to}: tells the applier. */
    void rewound(long to) {
        applied = Math.min(applied, to);
        if (applier != null) {
            try {
                applier.rewound(to);
            } catch (RuntimeException e) {
                LOG.warn("The applier's rewound({}) threw (ignored): {}", Lsn.format(to), e.toString());
            }
        }
    }

    /** After the receiver stopped. */
    void close() {
        if (reader != null) {
            reader.close();
        }
    }
}
