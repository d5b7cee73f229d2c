package io.walden.core;

import com.github.luben.zstd.Zstd;

import java.util.Objects;

/**
 * How a log stores the payloads of appends that choose no compression: the codec, whether small zstd payloads use a
 * dictionary the log trains, and zstd's level (docs/format.md, docs/benchmarks.md). Each value is explained where it
 * is set, on {@link WalConfig.Builder}'s method of the same name; {@link WalConfig#compressionSettings()} reads them.
 *
 * <p>A null codec is refused when it is set; {@link #check} refuses a level zstd does not have when the config is
 * built.
 *
 * <p>Thread-safety: immutable.
 *
 * @param compression    the codec of appends that choose none ({@link WalConfig.Builder#compression})
 * @param zstdDictionary whether small zstd payloads use a trained dictionary ({@link WalConfig.Builder#zstdDictionary})
 * @param zstdLevel      the level of zstd payloads ({@link WalConfig.Builder#zstdLevel})
 */
public record CompressionSettings(Compression compression, boolean zstdDictionary, int zstdLevel) {
    /** No compression; a dictionary and level 1 once zstd is chosen. */
    static final CompressionSettings DEFAULTS = new CompressionSettings(Compression.NONE, true, WalConfig.DEFAULT_ZSTD_LEVEL);

    public CompressionSettings {
        Objects.requireNonNull(compression, "compression");
    }

    CompressionSettings withCompression(Compression codec) {
        return new CompressionSettings(codec, zstdDictionary, zstdLevel);
    }

    CompressionSettings withZstdDictionary(boolean enabled) {
        return new CompressionSettings(compression, enabled, zstdLevel);
    }

    CompressionSettings withZstdLevel(int level) {
        return new CompressionSettings(compression, zstdDictionary, level);
    }

    /** Refuses a level zstd does not have, and 0, which zstd reads as "its default level" rather than as a level. */
    void check() {
        if (zstdLevel == 0 || zstdLevel < Zstd.minCompressionLevel() || zstdLevel > Zstd.maxCompressionLevel()) {
            throw new IllegalSettingException("zstdLevel", "must be between " + Zstd.minCompressionLevel()
                    + " and " + Zstd.maxCompressionLevel() + ", and not 0", zstdLevel);
        }
    }
}
