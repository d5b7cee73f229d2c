package io.walden.core.internal.record;

/**
 * Finds the zstd dictionary a frame names, for {@link PayloadDecompressor}. A log's readers look in the segment that
 * holds the record (docs/format.md, "zstd dictionaries": the dictionary precedes the record in its segment).
 *
 * <p>Thread-safety: as the implementation says; a lookup is used by one reader at a time.
 */
@FunctionalInterface
public interface DictionaryLookup {
    /** Finds no dictionary: for bytes read outside any segment. */
    DictionaryLookup NONE = id -> null;

    /** @return the dictionary with zstd id {@code id}, or null when there is none where it must be */
    ZstdDictionary find(long id);
}
