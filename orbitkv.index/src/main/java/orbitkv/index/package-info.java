/**
 * Requester GlobalIndex contract (DESIGN §6): lookups return positive evidence with a coverage state
 * and a view generation, never a per-member vector (IDX-8).
 */
package orbitkv.index;
