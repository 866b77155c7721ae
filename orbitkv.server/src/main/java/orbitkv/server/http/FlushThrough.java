package orbitkv.server.http;

import orbitkv.membership.Incarnation;

/**
 * Asks the session to {@code source} to make the source expose its journal through {@code targetSequence}
 * promptly (DESIGN §5 FlushThrough, API-5). Await calls it once before waiting; it must not block.
 *
 * <p>Implemented by the requester end of the InventorySession (its {@code flushThrough(source, target)}).
 * Until that session exists, {@link #NONE} is wired: it asks nothing, so await waits for the index's own
 * progress only.
 */
@FunctionalInterface
public interface FlushThrough {
    /** No session yet: asks nothing (documented in docs/api.md). */
    FlushThrough NONE = (source, targetSequence) -> {};

    void flushThrough(Incarnation source, long targetSequence);
}
