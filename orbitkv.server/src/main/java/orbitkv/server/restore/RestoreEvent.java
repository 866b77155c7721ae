package orbitkv.server.restore;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One restore that produced an answer, as a flight-recorder event with its stages on the requester (issue 37 item 5:
 * what the restore's thread does around a peer route's two exchanges, which {@code orbitkv.DataExchange} times on the
 * event loop). Off unless a recording enables it ({@code +orbitkv.Restore#enabled=true}); when off, a restore pays one
 * flag check and reads no clock for it ({@link RestoreStages#OFF}). Committed on the restore's thread when its answer
 * is assembled, before the HTTP layer encodes it.
 *
 * <p>Peer routes only in the grant and READ stages: a local route's pin and copy are part of {@code other}. Sums over
 * the restore's peer routes; a one-route restore (the case this event was built for) has one of each, and its stages
 * are disjoint, so they add up to the total. When routes overlap in time, the sums can exceed the total and
 * {@code other} is then negative: read such an event's stages as work done, not as a split of its duration.
 */
@Name("orbitkv.Restore")
@Label("Restore")
@Category({"OrbitKV", "Restore"})
@Description("A restore's stages on the requester: evidence, planning, peer grants and READs, the wake-ups between, assembly")
@Enabled(false)
@StackTrace(false)
final class RestoreEvent extends Event {
    @Label("Routes")
    @Description("Routes delivered to the answer")
    int routes;

    @Label("Peer Grants")
    @Description("Authorize calls answered to the restore's thread")
    int peerGrants;

    @Label("Keys")
    @Description("Keys restored (the answer's prefix)")
    int keys;

    @Label("Payload")
    @DataAmount(DataAmount.BYTES)
    long payloadBytes;

    @Label("Evidence")
    @Description("The index and tier lookups of the request's keys")
    @Timespan(Timespan.NANOSECONDS)
    long evidenceNanos;

    @Label("Plan")
    @Description("From the evidence to the planner's first port call (the demand, the local evidence, the route choice)")
    @Timespan(Timespan.NANOSECONDS)
    long planNanos;

    @Label("Credits")
    @Description("Routes' receive credits, node room and record memory taken, the records' headers written (summed)")
    @Timespan(Timespan.NANOSECONDS)
    long creditsNanos;

    @Label("Grant Wait")
    @Description("From Authorize asked of the engine to its answer completing, on the completing thread (summed)")
    @Timespan(Timespan.NANOSECONDS)
    long grantWaitNanos;

    @Label("Grant Wake")
    @Description("From an Authorize answer completing to the restore's thread running with it (summed)")
    @Timespan(Timespan.NANOSECONDS)
    long grantWakeNanos;

    @Label("Read")
    @Description("From a granted peer route's READs submitted to the route ready, on the completing thread (summed)")
    @Timespan(Timespan.NANOSECONDS)
    long readNanos;

    @Label("After Ready")
    @Description("From the last peer route ready to the planner returning (the restore thread's wake-up, its bookkeeping)")
    @Timespan(Timespan.NANOSECONDS)
    long afterReadyNanos;

    @Label("Assemble")
    @Description("From the planner returning to the answer assembled (records delivered, served list, trace header)")
    @Timespan(Timespan.NANOSECONDS)
    long assembleNanos;

    @Label("Other")
    @Description("The total less every stage above: local routes' pins and copies, the steps between grant and READ")
    @Timespan(Timespan.NANOSECONDS)
    long otherNanos;

    @Label("Total")
    @Description("From the restore's first step (its evidence) to its answer assembled")
    @Timespan(Timespan.NANOSECONDS)
    long totalNanos;
}
