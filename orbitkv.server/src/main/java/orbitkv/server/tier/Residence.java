package orbitkv.server.tier;

import orbitkv.inventory.Medium;

/**
 * A local residence as the query answer reports it.
 *
 * @param medium the tier
 * @param sequence the residency sequence
 * @param sizeBytes payload size
 */
public record Residence(Medium medium, long sequence, long sizeBytes) {}
