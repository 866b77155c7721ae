package orbitkv.server.incarnation;

import java.util.Locale;
import orbitkv.transfer.PeerRouteClass;

/**
 * The one spelling of a closed enum's value in status maps and metric labels (DIAG-2: bounded labels only): its
 * name in lowercase ({@code shared_memory}, {@code pins_exhausted}), except a route kind, which is spelled as in the
 * {@code X-OrbitKV-Route} header and the route traces everywhere ({@code peer-dram}, {@code local-ssd}; issue 34
 * item 3).
 */
public final class StatusLabels {
    private StatusLabels() {}

    /** {@code e}'s label: its name in lowercase; a {@link PeerRouteClass} as its route kind ({@code peer-dram}). */
    public static String of(Enum<?> e) {
        String lower = e.name().toLowerCase(Locale.ROOT);
        return e instanceof PeerRouteClass ? lower.replace('_', '-') : lower;
    }
}
