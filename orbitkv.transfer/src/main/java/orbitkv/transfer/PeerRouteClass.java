package orbitkv.transfer;

import orbitkv.inventory.Medium;

/** The route class of a peer READ (a closed label set): which medium of a peer served it. */
public enum PeerRouteClass {
    PEER_DRAM,
    PEER_SSD;

    public static PeerRouteClass of(Medium medium) {
        return medium == Medium.DRAM ? PEER_DRAM : PEER_SSD;
    }
}
