package io.walden.replication.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which replicas a commit waits for, in PostgreSQL's {@code synchronous_standby_names} syntax:
 * {@code FIRST n (a, b, c)} — the n highest-priority connected replicas, released at the minimum of their
 * positions; {@code ANY n (a, b, c)} — a quorum, released at the n-th largest position; a plain list
 * {@code a, b} means {@code FIRST 1 (a, b)}.
 *
 * <p>Immutable; thread-safe.
 */
public final class SyncPolicy {
    private static final Pattern FORM = Pattern.compile("^\\s*(FIRST|ANY)\\s+(\\d+)\\s*\\((.*)\\)\\s*$", Pattern.CASE_INSENSITIVE);

    private final boolean quorum;
    private final int count;
    private final List<String> names;

    private SyncPolicy(boolean quorum, int count, List<String> names) {
        this.quorum = quorum;
        this.count = count;
        this.names = names;
    }

    /** Parses {@code FIRST n (a, b)}, {@code ANY n (a, b)} or a plain list. */
    public static SyncPolicy parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty synchronous replica policy (expected FIRST n (a, b) or ANY n (a, b))");
        }
        Matcher m = FORM.matcher(text);
        boolean quorum = false;
        int count = 1;
        String list = text;
        if (m.matches()) {
            quorum = m.group(1).toUpperCase(Locale.ROOT).equals("ANY");
            count = Integer.parseInt(m.group(2));
            list = m.group(3);
        } else if (text.contains("(")) {
            throw new IllegalArgumentException("not a synchronous replica policy: '" + text
                    + "' (expected FIRST n (a, b) or ANY n (a, b))");
        }
        List<String> names = new ArrayList<>();
        for (String n : list.split(",")) {
            String name = n.trim();
            if (!isValidName(name)) {
                throw new IllegalArgumentException("bad replica name '" + name + "' in '" + text + "'");
            }
            if (names.contains(name)) {
                throw new IllegalArgumentException("replica '" + name + "' named twice in '" + text + "'");
            }
            names.add(name);
        }
        if (count < 1 || count > names.size()) {
            throw new IllegalArgumentException("the policy '" + text + "' waits for " + count + " of " + names.size() + " replicas");
        }
        return new SyncPolicy(quorum, count, List.copyOf(names));
    }

    /** Whether {@code name} can name a replica: 1 to 64 of letters, digits, '_', '.', '-'. */
    public static boolean isValidName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    public List<String> names() {
        return names;
    }

    public boolean isQuorum() {
        return quorum;
    }

    public int count() {
        return count;
    }

    /**
     * The position the policy confirms, given the connected replicas' positions at one level: below it, every
     * record is confirmed. 0 (nothing) while fewer than {@code count} of the named replicas are connected.
     */
    public long confirmed(Map<String, Long> positions) {
        List<Long> chosen = new ArrayList<>();
        for (String name : names) {
            Long p = positions.get(name);
            if (p != null) {
                chosen.add(p);
            }
            if (!quorum && chosen.size() == count) {
                break; // FIRST: the highest-priority connected ones
            }
        }
        if (chosen.size() < count) {
            return 0;
        }
        long[] sorted = chosen.stream().mapToLong(Long::longValue).sorted().toArray();
        // FIRST n: the slowest of the n chosen; ANY n: the n-th largest of all connected named replicas.
        return quorum ? sorted[sorted.length - count] : sorted[0];
    }

    @Override
    public String toString() {
        return (quorum ? "ANY " : "FIRST ") + count + " (" + String.join(", ", names) + ")";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SyncPolicy p && p.quorum == quorum && p.count == count && p.names.equals(names);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(new Object[] {quorum, count, names});
    }
}
