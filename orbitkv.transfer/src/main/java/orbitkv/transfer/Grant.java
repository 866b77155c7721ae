package orbitkv.transfer;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import orbitkv.membership.Incarnation;

/**
 * A source's authorization of some blocks: the source validated its own incarnation and each block's exact
 * residency sequence and pinned the granted ones (INV-2). Issued by {@link TransferEngine#authorize}; only the
 * engine that issued it can READ or release it.
 *
 * <p>Lifetime: the grant ends at the source on explicit release, on expiry ({@link #expiry()} after the source
 * issued it, on the source's monotonic clock), or when the requester's incarnation leaves the source's
 * membership view. The requester treats it as ended at {@link #localDeadlineNanos()}, which is never later
 * than the source's end (measured from before the request was sent, minus a safety margin).
 */
public interface Grant {
    /** The source's random grant id. */
    UUID id();

    /** The source incarnation that issued it. */
    Incarnation source();

    /** How long the grant lives after the source issued it. */
    Duration expiry();

    /** On the engine's monotonic clock: the instant after which no READ of this grant starts or completes. */
    long localDeadlineNanos();

    /** One result per requested block, in request order; at least one is {@link BlockResult.Granted}. */
    List<BlockResult> blocks();

    /** True when source and requester share a host (boot id) and the source named its shared arena. */
    boolean sharedMemoryEligible();
}
