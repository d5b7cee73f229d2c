package io.walden.core;

import java.util.Locale;

/**
 * How a record's payload is stored (PostgreSQL's {@code wal_compression}), chosen per append or by the log's default
 * ({@link WalConfig.Builder#compression}). A payload is stored compressed only when that saves space: payloads shorter
 * than {@link #MIN_PAYLOAD} bytes, and payloads the codec shrinks by less than an eighth, are stored as they are
 * (docs/format.md, "Compressed payloads"). Readers always get the original bytes back, whichever was chosen.
 */
public enum Compression {
    /** Stored as given. */
    NONE,
    /** LZ4 (lz4-java): cheap, about half the size of typical JSON. */
    LZ4,
    /** Zstandard (zstd-jni), at the log's level (WalConfig.Builder.zstdLevel, default 1): smaller than LZ4, at more CPU per record. */
    ZSTD;

    /** Payloads shorter than this are never compressed: the 4-byte length prefix and the codec's framing eat the gain. */
    public static final int MIN_PAYLOAD = 64;

    /** The name used in configuration and on the HTTP API: {@code none}, {@code lz4}, {@code zstd}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @throws IllegalArgumentException for anything but none, lz4 or zstd (any case)
     */
    public static Compression parse(String name) {
        for (Compression c : values()) {
            if (c.name().equalsIgnoreCase(name.trim())) {
                return c;
            }
        }
        throw new IllegalArgumentException("compression must be none, lz4 or zstd, not '" + name + "'");
    }
}
