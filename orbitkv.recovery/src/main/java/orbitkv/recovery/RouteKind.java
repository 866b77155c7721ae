package orbitkv.recovery;

import orbitkv.inventory.Medium;

/**
 * The candidate route kinds (ROUTE-2), declared in the fixed deterministic policy's preference
 * order: local before peer, DRAM before SSD (DESIGN §8, ROUTE-6). Recomputation is not a route kind
 * until an engine adapter contract supplies it.
 */
public enum RouteKind {
    LOCAL_DRAM(true, Medium.DRAM),
    LOCAL_SSD(true, Medium.SSD),
    PEER_DRAM(false, Medium.DRAM),
    PEER_SSD(false, Medium.SSD);

    private final boolean local;
    private final Medium medium;

    RouteKind(boolean local, Medium medium) {
        this.local = local;
        this.medium = medium;
    }

    public boolean local() {
        return local;
    }

    public Medium medium() {
        return medium;
    }

    /** {@code local-dram}, {@code local-ssd}, {@code peer-dram}, {@code peer-ssd}: traces, metrics, headers. */
    public String traceName() {
        return (local ? "local-" : "peer-") + (medium == Medium.DRAM ? "dram" : "ssd");
    }

    public static RouteKind of(boolean local, Medium medium) {
        return switch (medium) {
            case DRAM -> local ? LOCAL_DRAM : PEER_DRAM;
            case SSD -> local ? LOCAL_SSD : PEER_SSD;
        };
    }
}
