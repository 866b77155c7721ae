package orbitkv.inventory;

/**
 * Where a residence lives. Part of the residence identity: a DRAM delete never touches SSD (PUB-8).
 * Declaration order is the resident-map order after the StateKey (DRAM &lt; SSD).
 */
public enum Medium {
    DRAM,
    SSD
}
