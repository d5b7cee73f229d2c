package io.walden.server;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What each kill cost the logs of the killed server, as their clients saw it: for each log the server led, the time
 * from the kill to the first {@code on} append acknowledged again (begun after the kill), and for each log it held a
 * replica of, the same (its primary waits for an in-sync replica until it drops it). Kept per kill, summed up over all;
 * and what each join and drain of a server took.
 *
 * <p>Thread-safety: the test's thread only.
 */
final class FailoverTimes {
    /**
     * One kill: the server, how long it stayed down, and per log the milliseconds until an append was acknowledged again
     * ({@code primaries}: the logs it led, {@code replicas}: those it held a replica of), and until the watch read a new
     * leader of each log it led ({@code leaders}; within a reading's period after it happened).
     */
    record Kill(String victim, boolean quickRestart, long downMillis, Map<String, Long> leaders,
                Map<String, Long> primaries, Map<String, Long> replicas) {
    }

    /**
     * A server that joined and was drained: from its start (ready) until it led a log, the copies it held when the drain
     * was asked, the drain until it held none, and the longest any log waited for an append meanwhile.
     */
    record Join(long ledAfterMillis, int copies, long drainMillis, long longestWaitMillis) {
    }

    private final List<Kill> kills = new ArrayList<>();
    private final List<Join> joins = new ArrayList<>();

    void add(Kill kill) {
        kills.add(kill);
    }

    void add(Join join) {
        joins.add(join);
    }

    int kills() {
        return kills.size();
    }

    /** Every log's time, over the kills restarted quickly or not, for the logs the killed server led. */
    private List<Long> primaryTimes(boolean quick) {
        return kills.stream().filter(k -> k.quickRestart() == quick).flatMap(k -> k.primaries().values().stream())
                .sorted().toList();
    }

    private List<Long> leaderTimes(boolean quick) {
        return kills.stream().filter(k -> k.quickRestart() == quick).flatMap(k -> k.leaders().values().stream())
                .sorted().toList();
    }

    /**
     * The longest a log led by a killed server waited for an append, over the kills whose server came back after its
     * failover (over every kill when there were none such): one failover, as clients see it.
     */
    long longestFailover() {
        List<Long> times = primaryTimes(false).isEmpty() ? primaryTimes(true) : primaryTimes(false);
        return times.isEmpty() ? 0 : Collections.max(times);
    }

    private List<Long> replicaTimes() {
        return kills.stream().flatMap(k -> k.replicas().values().stream()).sorted().toList();
    }

    /** One line per kill, then the median and maximum over every kill. */
    String report() {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < kills.size(); i++) {
            Kill k = kills.get(i);
            out.append(String.format(Locale.ROOT, "kill %d: %s (down %d ms%s) led %d logs: new leader read after %s ms, "
                    + "appends acknowledged after %s ms; held %d replicas: appends acknowledged after %s ms%n", i + 1,
                    k.victim(), k.downMillis(), k.quickRestart() ? ", a quick restart" : "", k.primaries().size(),
                    new TreeMap<>(k.leaders()).values(),
                    new TreeMap<>(k.primaries()).values(), k.replicas().size(), new TreeMap<>(k.replicas()).values()));
        }
        for (boolean quick : new boolean[] {false, true}) {
            String which = quick ? "led by a server restarted quickly" : "led by a server back after the failover";
            out.append(summary(which, quick, primaryTimes(quick))).append('\n');
            out.append(String.format(Locale.ROOT, "    of which the kill to a new leader read: %s%n", spread(leaderTimes(quick))));
        }
        out.append(summary("with a replica on the killed server", null, replicaTimes())).append('\n');
        for (Join j : joins) {
            out.append(String.format(Locale.ROOT, "a server joined: led a log %d ms after it was ready; asked to drain with %d "
                    + "copies, it held none %d ms later; the longest wait for an append meanwhile %d ms%n", j.ledAfterMillis(),
                    j.copies(), j.drainMillis(), j.longestWaitMillis()));
        }
        return out.toString();
    }

    /** Over the kills restarted quickly ({@code quick}), or not, or all (null). */
    private String summary(String which, Boolean quick, List<Long> times) {
        long over = kills.stream().filter(k -> quick == null || k.quickRestart() == quick).count();
        return String.format(Locale.ROOT, "logs %s: kill to the first on append acknowledged again, over %d kills and %d "
                + "logs: %s", which, over, times.size(), spread(times));
    }

    private static String spread(List<Long> sorted) {
        return sorted.isEmpty() ? "none" : String.format(Locale.ROOT, "median %d ms, p90 %d ms, min %d ms, max %d ms",
                percentile(sorted, 50), percentile(sorted, 90), sorted.get(0), Collections.max(sorted));
    }

    /** The nearest-rank percentile of sorted {@code times}. */
    static long percentile(List<Long> times, int p) {
        int rank = (int) Math.ceil(p / 100.0 * times.size());
        return times.get(Math.max(0, rank - 1));
    }
}
