package io.walden.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The tokens a server accepts, each by the SHA-256 of its bytes, with its {@link Grant} (docs/operations.md, "Tokens
 * and roles"): the entries of {@code --auth-tokens} and, when given, {@code --auth-token} as an admin over every log.
 * The server never holds a token of the file, only its hash.
 *
 * <h2>What a lookup leaks by its timing</h2>
 * A presented token is hashed, and the hash found in a map keyed by its first 8 bytes; the whole 32 bytes are then
 * compared with {@link MessageDigest#isEqual}, which takes the same time wherever two hashes of equal length differ.
 * <ul>
 *   <li>Constant time: the comparison of the presented token's hash with a stored one (every candidate is compared,
 *       none skipped once one matched).</li>
 *   <li>Not constant time: the hashing (it depends on the length of the presented token, the client's own input), and
 *       the map's probe, whose time depends on whether the presented hash's first 8 bytes are a stored hash's. That
 *       tells a client something about the hash of a token it made up, which it cannot steer byte by byte (SHA-256 has
 *       no known way to aim a hash), and a stored hash, even learned whole, does not give back its token.</li>
 * </ul>
 * So no timing reveals a stored token a byte at a time, as a plain {@code equals} of tokens would.
 *
 * <p>Thread-safety: immutable once built; {@link #find} uses the caller's {@link MessageDigest} (one per connection).
 */
public final class Tokens {
    private static final int HASH_BYTES = 32;

    /** An entry: its hash, what it allows, and how errors name it ({@code entry 2}, {@code --auth-token}). */
    private record Entry(byte[] sha256, Grant grant, String name) {
    }

    /** Entries by the first 8 bytes of their hash (two sharing them, however unlikely, are both kept). */
    private final Map<Long, Entry[]> byPrefix;
    private final int size;

    private Tokens(Map<Long, Entry[]> byPrefix, int size) {
        this.byPrefix = byPrefix;
        this.size = size;
    }

    /** How many tokens there are. */
    public int size() {
        return size;
    }

    /** A lookup for one connection: it owns the digest and the hash's bytes, so that a lookup allocates nothing. */
    public Lookup lookup() {
        return new Lookup();
    }

    /** Finds tokens by their hash. Not thread-safe: one per connection, used on its event loop. */
    public final class Lookup {
        private final MessageDigest sha256 = newDigest();
        private final byte[] hash = new byte[HASH_BYTES];

        private Lookup() {
        }

        /**
         * The grant of the token whose bytes are the chars of {@code text} from {@code from} on (each char one byte, as
         * an HTTP header's value holds them: ISO-8859-1), or null when no entry has it.
         */
        public Grant find(CharSequence text, int from) {
            sha256.reset();
            for (int i = from; i < text.length(); i++) {
                sha256.update((byte) text.charAt(i));
            }
            try {
                sha256.digest(hash, 0, HASH_BYTES);
            } catch (DigestException e) {
                throw new IllegalStateException(e); // 32 bytes always hold a SHA-256
            }
            Entry[] candidates = byPrefix.get(prefix(hash));
            if (candidates == null) {
                return null;
            }
            Grant found = null;
            for (Entry e : candidates) {
                if (MessageDigest.isEqual(hash, e.sha256())) { // constant time (class comment); no early exit
                    found = e.grant();
                }
            }
            return found;
        }
    }

    /** The SHA-256 of a token's UTF-8 bytes, as the tokens file holds it. */
    public static byte[] sha256(String token) {
        return newDigest().digest(token.getBytes(StandardCharsets.UTF_8));
    }

    /** A new SHA-256 digest (every JVM has one). */
    public static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    private static long prefix(byte[] hash) {
        long p = 0;
        for (int i = 0; i < 8; i++) {
            p = p << 8 | (hash[i] & 0xFF);
        }
        return p;
    }

    /** Gathers entries; refuses a second entry of the same token. Not thread-safe: built once, at start. */
    public static final class Builder {
        private final Map<Long, Entry[]> byPrefix = new HashMap<>();
        private int size;

        /**
         * @param sha256 the token's hash: 32 bytes
         * @param name   how an error names the entry: {@code entry 2}, {@code --auth-token}
         * @throws IllegalArgumentException when an entry before it has the same hash, naming both
         */
        public Builder add(byte[] sha256, Grant grant, String name) {
            if (sha256.length != HASH_BYTES) {
                throw new IllegalArgumentException(name + ": a SHA-256 is 32 bytes, not " + sha256.length);
            }
            Entry[] same = byPrefix.getOrDefault(prefix(sha256), new Entry[0]);
            for (Entry e : same) {
                if (Arrays.equals(e.sha256(), sha256)) { // start-up, not a request: timing is no matter here
                    throw new IllegalArgumentException(name + " is the same token as " + e.name() + ": give each token once");
                }
            }
            Entry[] more = Arrays.copyOf(same, same.length + 1);
            more[same.length] = new Entry(sha256.clone(), grant, name);
            byPrefix.put(prefix(sha256), more);
            size++;
            return this;
        }

        public Tokens build() {
            return new Tokens(Map.copyOf(byPrefix), size);
        }
    }
}
