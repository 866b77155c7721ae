package orbitkv.recovery.trace;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteMetrics;

/** The selection's counters (closed label sets: kind, refusal, decision, stop; DIAG-2). */
public final class RouteCounters {
    public final LongAdder plans = new LongAdder();
    public final LongAdder restores = new LongAdder();
    public final AtomicLong drainPending = new AtomicLong();
    private final LongAdder[][] kinds = new LongAdder[RouteKind.values().length][6];
    private final LongAdder[] refusals = adders(AdmissionRefusal.values().length);
    private final LongAdder[] replans = adders(AdmissionRefusal.values().length);
    private final LongAdder[] decisions = adders(DecisionReason.values().length);
    private final LongAdder[] stops = adders(PrefixStop.values().length);

    private static final int EXECUTED = 0;
    private static final int READY = 1;
    private static final int FAILED = 2;
    private static final int TIMED_OUT = 3;
    private static final int REFUSED = 4;
    private static final int BYTES = 5;

    public RouteCounters() {
        for (LongAdder[] k : kinds) {
            for (int i = 0; i < k.length; i++) {
                k[i] = new LongAdder();
            }
        }
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    public void executed(RouteKind k) {
        kinds[k.ordinal()][EXECUTED].increment();
    }

    public void ready(RouteKind k, long bytes) {
        kinds[k.ordinal()][READY].increment();
        kinds[k.ordinal()][BYTES].add(bytes);
    }

    public void payloadFailure(RouteKind k) {
        kinds[k.ordinal()][FAILED].increment();
    }

    public void timedOut(RouteKind k) {
        kinds[k.ordinal()][TIMED_OUT].increment();
    }

    public void refused(RouteKind k, AdmissionRefusal r) {
        kinds[k.ordinal()][REFUSED].increment();
        refusals[r.ordinal()].increment();
    }

    public void replan(AdmissionRefusal r) {
        replans[r.ordinal()].increment();
    }

    public void decision(DecisionReason r) {
        decisions[r.ordinal()].increment();
    }

    public void stop(PrefixStop s) {
        stops[s.ordinal()].increment();
    }

    /** A snapshot; the caller supplies the figures other owners keep. */
    public RouteMetrics snapshot(long observationsEvicted, long peersEvicted, long[] traceFile, long[] load) {
        Map<RouteKind, RouteMetrics.KindCounts> byKind = new EnumMap<>(RouteKind.class);
        for (RouteKind k : RouteKind.values()) {
            LongAdder[] a = kinds[k.ordinal()];
            byKind.put(k, new RouteMetrics.KindCounts(a[EXECUTED].sum(), a[READY].sum(), a[FAILED].sum(), a[TIMED_OUT].sum(),
                    a[REFUSED].sum(), a[BYTES].sum()));
        }
        return new RouteMetrics(plans.sum(), restores.sum(), byKind, map(AdmissionRefusal.class, refusals),
                map(AdmissionRefusal.class, replans), map(DecisionReason.class, decisions), map(PrefixStop.class, stops),
                observationsEvicted, peersEvicted, traceFile[0], traceFile[1], traceFile[2], traceFile[3], load[0], load[1],
                load[2], load[3], drainPending.get());
    }

    private static <E extends Enum<E>> Map<E, Long> map(Class<E> type, LongAdder[] a) {
        Map<E, Long> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, a[e.ordinal()].sum());
        }
        return m;
    }
}
