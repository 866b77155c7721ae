package orbitkv.transfer;

import orbitkv.inventory.Medium;

/** The route class of a peer READ (a closed label set): which medium of a peer served it. */
public enum RouteClass {
    PEER_DRAM,
    PEER_SSD;

    public static RouteClass of(Medium medium) {
        return medium == Medium.DRAM ? PEER_DRAM : PEER_SSD;
    }
}
