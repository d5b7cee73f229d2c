package io.walden.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@link ClusterLoad}'s rounds as the Markdown tables of docs/benchmarks.md ("A cluster of servers"), printed at the
 * end of a run so that the figures are copied, not retyped.
 */
final class ClusterTable {
    private ClusterTable() {
    }

    static String markdown(List<Map<String, Object>> rounds) {
        StringBuilder md = new StringBuilder();
        md.append("| servers | logs × copies | clients | commits/s | × 1 server | floor/s before / after | × floor "
                + "| p50 µs | p99 µs | p99.9 µs | CPU per server (cores) | load generator CPU | other processes' CPU "
                + "| server CPU µs/commit |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Map<String, Object> r : rounds) {
            md.append(String.format(Locale.ROOT, "| %d | %d × %d | %d | %,d | %.2f | %,d / %,d | %.2f | %d | %d | %d | %s | %.2f | %.2f | %.1f |%n",
                    r.get("servers"), r.get("logs"), r.get("replicas"),
                    (int) r.get("logs") * (int) r.get("clientsPerLog"), r.get("commitsPerSecond"), r.get("ratioToFirst"),
                    r.get("floorBeforePerSecond"), r.get("floorAfterPerSecond"), r.get("ratioToFloor"), r.get("p50us"), r.get("p99us"),
                    r.get("p999us"), cores(r.get("serverCpuCores")), r.get("loadGeneratorCpuCores"),
                    r.get("otherProcessesCpuCores"),
                    r.get("serverCpuUsPerCommit")));
        }
        for (Map<String, Object> r : rounds) {
            if (r.get("failure") != null) {
                md.append("\n").append(r.get("servers")).append(" server(s): a client saw ").append(r.get("failure"))
                        .append("\n");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> j = (Map<String, Object>) r.get("join");
            if (j != null) {
                md.append(join(j, (int) r.get("logs")));
            }
        }
        return md.toString();
    }

    private static String join(Map<String, Object> j, int logs) {
        long fill = ((Number) j.get("fillBytesPerLog")).longValue();
        StringBuilder md = new StringBuilder("\n| a 4th server joins 3 | |\n|---|---|\n");
        md.append(String.format(Locale.ROOT, "| data before it joins | %d MiB per log, %d MiB in all (filled at %.1f MB/s, "
                + "batches of 1024 × 1 KiB at `on`) |%n", fill >> 20, (fill >> 20) * logs, j.get("fillMBps")));
        md.append(String.format(Locale.ROOT, "| start → ready (`GET /ready`) | %.1f s |%n", ms(j, "startToReadyMs")));
        md.append(String.format(Locale.ROOT, "| start → first copy placed on it | %.1f s |%n", ms(j, "startToFirstCopyMs")));
        md.append(String.format(Locale.ROOT, "| start → settled (no move in flight, every log in sync) | **%.1f s** |%n",
                ms(j, "startToSettledMs")));
        md.append(String.format(Locale.ROOT, "| it holds then | %s primaries, %s replicas (an even share: %s copies) |%n",
                j.get("joinerPrimaries"), j.get("joinerReplicas"), j.get("evenShareCopies")));
        md.append(String.format(Locale.ROOT, "| bytes copied to it | %.1f MiB |%n",
                ((Number) j.get("bytesCopied")).longValue() / 1048576.0));
        md.append(String.format(Locale.ROOT, "| copy rate | **%.1f MB/s** from its start, %.1f MB/s from ready |%n",
                j.get("copyRateMBps"), j.get("copyRateFromReadyMBps")));
        md.append("| CPU while it joined (s1, s2, s3, s4, load generator) | ")
                .append(cores(j.get("cpuCoresDuringJoin"))).append(" cores |\n");
        return md.toString();
    }

    private static double ms(Map<String, Object> j, String key) {
        return ((Number) j.get(key)).longValue() / 1000.0;
    }

    private static String cores(Object list) {
        StringBuilder s = new StringBuilder();
        for (Object c : (List<?>) list) {
            s.append(s.length() == 0 ? "" : " / ").append(String.format(Locale.ROOT, "%.2f", ((Number) c).doubleValue()));
        }
        return s.toString();
    }
}
