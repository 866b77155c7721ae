package orbitkv.conformance.kit;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one row saw from the target, for its FAIL line when it runs out of time: a count per kind of
 * observation (e.g. {@code LIVENESS}) and the first {@value #DETAILS_MAX} details; bounded however much
 * arrives. Written by the row's thread, read by the {@link RowRunner} when the deadline passes.
 */
final class RowLog {
    static final int DETAILS_MAX = 8;
    static final int KINDS_MAX = 32;

    private final Map<String, Long> counts = new LinkedHashMap<>();
    private final List<String> details = new ArrayList<>();
    private long dropped;

    /** Records one observation of {@code kind}, with {@code detail} kept while there is room. */
    synchronized void saw(String kind, String detail) {
        if (counts.containsKey(kind) || counts.size() < KINDS_MAX) {
            counts.merge(kind, 1L, Long::sum);
        } else {
            dropped++;
        }
        if (details.size() < DETAILS_MAX) {
            details.add(detail);
        }
    }

    synchronized long count(String kind) {
        return counts.getOrDefault(kind, 0L);
    }

    /** e.g. {@code "saw LIVENESS ×37 (first: liveness head 10 frame 12)"}, or {@code "saw nothing"}. */
    synchronized String summary() {
        if (counts.isEmpty()) {
            return "saw nothing from the target";
        }
        StringBuilder b = new StringBuilder("saw ");
        counts.forEach((k, n) -> b.append(b.length() > 4 ? ", " : "").append(k).append(" x").append(n));
        if (dropped > 0) {
            b.append(", ").append(dropped).append(" more of other kinds");
        }
        return b.append(" (first: ").append(String.join("; ", details)).append(')').toString();
    }
}
