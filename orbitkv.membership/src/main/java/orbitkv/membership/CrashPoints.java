package orbitkv.membership;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Named points inside a Manager where a fault campaign can stop the process dead (issue 17): off unless the
 * JVM was started with {@code -Dorbitkv.crashpoints=NAME[@N][,NAME[@N]...]}, which the production launcher
 * never sets. An armed point halts the process ({@link Runtime#halt}: no shutdown hooks, no drain, no lease
 * revocation, exactly like {@code kill -9}) the {@code N}-th time it is reached (the first time without
 * {@code @N}), after one line on standard error naming it, so the campaign can tell a crash point from
 * any other death. The exit status is {@value #EXIT_STATUS}.
 *
 * <p>Unarmed, {@link #reach} is one read of a static final flag: free on the hot paths that call it. The
 * class lives in membership's contract package because it is the lowest module every Manager module
 * requires (like {@link RetryBackoff}); it carries no membership semantics.
 */
public final class CrashPoints {
    /** The system property that arms points. */
    public static final String PROPERTY = "orbitkv.crashpoints";
    /** Exit status of a halted process. */
    public static final int EXIT_STATUS = 86;

    /** Where a Manager can be stopped. */
    public enum Point {
        /** Before the registration transaction of a start or a heal. */
        BEFORE_REGISTRATION,
        /** After the registration committed, before the incarnation serves. */
        AFTER_REGISTRATION,
        /** Source end: right after a snapshot page left for a requester (mid-snapshot). */
        SNAPSHOT_PAGE_SENT,
        /** Source end: right after an ordinary delta left for a requester (mid-delta). */
        DELTA_SENT,
        /** Requester end: right after a snapshot page went into staging (mid-snapshot). */
        SNAPSHOT_PAGE_STAGED,
        /** Requester end: right after a delta was applied (mid-delta). */
        DELTA_APPLIED,
        /** A save's blocks are resident (sequences assigned), its answer not yet written. */
        SAVE_RESIDENT,
        /** A heal registered a new incarnation; the tiers are not yet re-announced. */
        HEAL_REGISTERED,
        /** Mid-READ of a transfer: reserved for the transfer wiring (no call site yet). */
        MID_READ;

        /** The name used in the property: lower case with dashes, e.g. {@code snapshot-page-sent}. */
        public String propertyName() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        static Point parse(String name) {
            for (Point p : values()) {
                if (p.propertyName().equals(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown crash point '" + name + "' in -D" + PROPERTY);
        }
    }

    private static final Map<Point, long[]> ARMED = parse(System.getProperty(PROPERTY, ""));
    private static final boolean ANY = !ARMED.isEmpty();
    private static final Map<Point, AtomicLong> REACHED = new EnumMap<>(Point.class);

    static {
        for (Point p : Point.values()) {
            REACHED.put(p, new AtomicLong());
        }
    }

    private CrashPoints() {}

    /** Halts the process if {@code point} is armed and this is its armed occurrence; otherwise returns at once. */
    public static void reach(Point point) {
        if (!ANY) {
            return;
        }
        long[] at = ARMED.get(point);
        if (at == null) {
            return;
        }
        long n = REACHED.get(point).incrementAndGet();
        if (n == at[0]) {
            System.err.println("orbitkv crashpoint " + point.propertyName() + " reached (occurrence " + n + "): halting");
            System.err.flush();
            Runtime.getRuntime().halt(EXIT_STATUS);
        }
    }

    /** True iff any point is armed in this JVM. */
    public static boolean armed() {
        return ANY;
    }

    /**
     * Parses {@code NAME[@N][,NAME[@N]...]} into the occurrence at which each named point halts.
     *
     * @throws IllegalArgumentException naming an unknown point or a bad occurrence
     */
    static Map<Point, long[]> parse(String spec) {
        Map<Point, long[]> armed = new EnumMap<>(Point.class);
        for (String part : spec.split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            int at = p.indexOf('@');
            long occurrence = 1;
            if (at >= 0) {
                try {
                    occurrence = Long.parseLong(p.substring(at + 1));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("crash point occurrence must be a number >= 1 in '" + p + "'");
                }
                if (occurrence < 1) {
                    throw new IllegalArgumentException("crash point occurrence must be >= 1 in '" + p + "'");
                }
                p = p.substring(0, at);
            }
            armed.put(Point.parse(p), new long[] {occurrence});
        }
        return armed;
    }
}
