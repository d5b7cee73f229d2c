package io.walden.core;

/** A payload longer than {@link WalConfig#maxPayloadSize()}; refused before anything was written. */
public class PayloadTooLargeException extends WalException {
    private static final long serialVersionUID = 1L;
    private final long size;
    private final int max;

    public PayloadTooLargeException(long size, int max) {
        super("payload of " + size + " bytes exceeds the maximum of " + max
                + " bytes (WalConfig.maxPayloadSize); nothing was written");
        this.size = size;
        this.max = max;
    }

    public long size() {
        return size;
    }

    public int max() {
        return max;
    }
}
