package orbitkv.recovery.trace;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;
import orbitkv.recovery.RouteTrace;
import orbitkv.recovery.TracePage;

/**
 * The newest {@code max} route traces, for paginated status: bounded by count; adding beyond it drops the oldest
 * (a trace is diagnostics, kept in the sampled file when that is on).
 */
public final class TraceRing {
    /** Largest page. */
    public static final int PAGE_MAX = 1_024;

    private final int max;
    private final ArrayDeque<RouteTrace> traces;

    public TraceRing(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("trace ring size must be >= 1");
        }
        this.max = max;
        this.traces = new ArrayDeque<>(Math.min(max, 1024));
    }

    public synchronized void add(RouteTrace t) {
        if (traces.size() == max) {
            traces.pollFirst();
        }
        traces.addLast(t);
    }

    /** Newest first, ids below {@code beforeId} when given. */
    public synchronized TracePage page(int limit, OptionalLong beforeId) {
        if (limit < 1 || limit > PAGE_MAX) {
            throw new IllegalArgumentException("trace page limit must be 1.." + PAGE_MAX + ", got " + limit);
        }
        List<RouteTrace> out = new ArrayList<>(Math.min(limit, traces.size()));
        boolean more = false;
        for (Iterator<RouteTrace> it = traces.descendingIterator(); it.hasNext(); ) {
            RouteTrace t = it.next();
            if (beforeId.isPresent() && t.id() >= beforeId.getAsLong()) {
                continue;
            }
            if (out.size() == limit) {
                more = true;
                break;
            }
            out.add(t);
        }
        return new TracePage(out, more ? OptionalLong.of(out.get(out.size() - 1).id()) : OptionalLong.empty());
    }
}
