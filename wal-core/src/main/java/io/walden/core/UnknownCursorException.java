package io.walden.core;

/** No cursor of that name exists in this log. */
public class UnknownCursorException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String cursor;

    public UnknownCursorException(String cursor) {
        super("no cursor named '" + cursor + "'");
        this.cursor = cursor;
    }

    public String cursor() {
        return cursor;
    }
}
