package io.walden.core;

/**
 * What {@link Wal#open(WalConfig)} found and did, logged at open and kept for status pages and metrics.
 *
 * @param createdNewLog       true when the directory held no log and a new one was created
 * @param rebuiltControlFile  true when the control file was missing and was rebuilt from the segments
 * @param scanStartLsn        where the end-of-log scan began (the control file's checkpoint)
 * @param endLsn              the end of the log: where the next record goes
 * @param lastRecordLsn       the last valid record, or {@link Lsn#INVALID} for an empty log
 * @param recordsScanned      valid records the scan passed over (padding included)
 * @param segmentsScanned     segments the scan touched
 * @param bytesCutOff         non-zero bytes past the end that were zeroed (a torn or garbage tail)
 * @param firstBadLsn         where the scan stopped on an invalid record, or {@link Lsn#INVALID} at a clean end
 * @param reason              why the scan stopped, in words
 * @param truncatedCorruption true when damage below the flush point was cut off because the config allows it
 * @param durationNanos       time the whole open took
 * @param shutDownCleanly     true when the log had been closed cleanly (or is new): everything appended before had
 *                            been flushed, so no replica can hold a byte beyond its end; false after a crash
 */
public record RecoveryReport(boolean createdNewLog, boolean rebuiltControlFile, long scanStartLsn, long endLsn,
                             long lastRecordLsn, long recordsScanned, int segmentsScanned, long bytesCutOff,
                             long firstBadLsn, String reason, boolean truncatedCorruption, long durationNanos,
                             boolean shutDownCleanly) {

    /** True when recovery had to repair anything. */
    public boolean repaired() {
        return bytesCutOff > 0 || firstBadLsn != Lsn.INVALID;
    }

    @Override
    public String toString() {
        if (createdNewLog) {
            return "created a new log (end " + Lsn.format(endLsn) + ") in " + durationNanos / 1_000_000 + " ms";
        }
        return "scanned " + recordsScanned + " records in " + segmentsScanned + " segment(s) from "
                + Lsn.format(scanStartLsn) + "; end of log " + Lsn.format(endLsn) + " (last record "
                + Lsn.format(lastRecordLsn) + "); " + reason
                + (bytesCutOff > 0 ? "; cut off " + bytesCutOff + " non-zero bytes past the end" : "")
                + (truncatedCorruption ? "; CORRUPTION below the flush point was truncated as configured" : "")
                + (rebuiltControlFile ? "; control file rebuilt from the segments" : "")
                + (shutDownCleanly ? "" : "; the log had not been closed cleanly")
                + "; took " + durationNanos / 1_000_000 + " ms";
    }
}
