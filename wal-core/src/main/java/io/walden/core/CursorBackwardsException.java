package io.walden.core;

/** A cursor only moves forward: a commit below its LSN is refused, and the cursor stays where it was. */
public class CursorBackwardsException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final long current;

    public CursorBackwardsException(String cursor, long current, long requested) {
        super("cursor '" + cursor + "' is at " + Lsn.format(current) + "; it moves only forward, not to " + Lsn.format(requested));
        this.current = current;
    }

    /** Where the cursor stays. */
    public long current() {
        return current;
    }
}
