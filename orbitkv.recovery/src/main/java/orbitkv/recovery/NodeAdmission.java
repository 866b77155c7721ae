package orbitkv.recovery;

import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The node-local S6 admission owner (DESIGN "Receive credits, interference and retention"; ROUTE-11): one bounded
 * in-flight byte window and one pacer per physical NIC and direction ({@link NicLane}), charged by every
 * participating submitter - this Manager's restore READs and egress and an engine's own P/D WRITEs - so that the
 * window is node-wide. Sans-I/O: no threads and no sockets; the clock is injected; thread-safe.
 *
 * <p>Life cycle of credits: a submitter {@link #register registers}, asks for a {@link #lease} of at most one batch
 * ({@link AdmissionPolicy#leaseBatchBytesMax()}), and {@link #returnBytes returns} bytes only with evidence: transport
 * progress from anyone, or "never submitted" from a live submitter for an unexpired lease. A lease's expiry and a
 * submitter's {@link #lost loss} never give capacity back (an old submitter may still spend it): those bytes stay
 * charged, counted as quarantined, until transport progress or {@link #terminated termination evidence}.
 *
 * <p>Scheduling: a request that may wait is queued (bounded) and granted by {@link #advance()} in this order: a request
 * that waited {@link AdmissionPolicy#agingNanos()} first (oldest first, aging), then the earliest eligible deadline
 * (expired deadlines are refused, never granted late), then the least remaining required work, then the instance with
 * the fewest bytes charged (per-instance fairness), then arrival. Each lane serves its best request first and never
 * lets a later one overtake it; an immediate request never overtakes queued work on its lane.
 */
public interface NodeAdmission {
    /**
     * @param policy the lanes and bounds
     * @param monoNanos the monotonic clock ({@code System::nanoTime} in a Manager)
     */
    static NodeAdmission create(AdmissionPolicy policy, LongSupplier monoNanos) {
        return new orbitkv.recovery.admission.AdmissionOwner(policy, monoNanos);
    }

    AdmissionPolicy policy();

    /**
     * Registers a submitter. {@code instance} names the engine instance or Manager (fairness is per instance):
     * 1..128 printable ASCII characters.
     *
     * @return {@link AdmissionOutcome.Registered} or {@link CreditRefusal#SUBMITTERS_FULL}
     * @throws IllegalArgumentException for a bad instance name (nothing changes)
     */
    AdmissionOutcome register(SubmitterKind kind, String instance);

    /**
     * Asks for credits on one lane.
     *
     * @return {@link AdmissionOutcome.Granted}, {@link AdmissionOutcome.Queued} (only if {@code request.mayWait()}) or
     *     a refusal
     * @throws IllegalArgumentException for an unknown submitter or lane, or bytes outside 1..batch (nothing changes)
     */
    AdmissionOutcome lease(long submitter, NicLane lane, LeaseRequest request);

    /**
     * Whether {@code bytes} fit {@code lane}'s window beside everything charged now. Charges nothing; the pacer and
     * queued requests are not consulted (they delay work, they never make it impossible). A peer route asks this
     * before its authorization so that a lane held by others refuses it by name before a source grants and pins
     * anything (ROUTE-11); its READs then {@link #lease} per READ and may wait.
     *
     * @return empty when they fit, else the {@link CreditRefusal#WINDOW_FULL} refusal (counted like every refusal)
     * @throws IllegalArgumentException for an unknown lane or bytes below 1 (nothing changes)
     */
    Optional<AdmissionOutcome.Refused> room(NicLane lane, long bytes);

    /**
     * Gives {@code bytes} of a lease back with {@code evidence}. A lease with nothing outstanding is closed.
     *
     * @return {@link AdmissionOutcome.Returned} or {@link CreditRefusal#UNSPENT_RETURN_UNTRUSTED}
     * @throws IllegalArgumentException for an unknown lease, another submitter's lease, or more bytes than are
     *     outstanding (nothing changes)
     */
    AdmissionOutcome returnBytes(long submitter, long lease, long bytes, ReturnEvidence evidence);

    /**
     * Withdraws a queued request (its waiter gave up). Returns false when the ticket is not queued (already answered
     * or unknown): then its answer came or comes from {@link #advance()}, and a grant must be returned by its holder.
     */
    boolean cancel(long ticket);

    /**
     * Declares a submitter lost (its process or session vanished without termination evidence): its queued requests
     * end as {@link CreditRefusal#SUBMITTER_LOST} (returned by the next {@link #advance()}), it gets nothing new, and
     * its outstanding bytes stay charged as quarantined. Idempotent.
     *
     * @throws IllegalArgumentException for an unknown submitter
     */
    void lost(long submitter);

    /**
     * Termination evidence for a submitter (its process exited, its transport endpoints were revoked): every byte it
     * has outstanding returns, its queued requests end, and its slot is freed.
     *
     * @return the bytes returned
     * @throws IllegalArgumentException for an unknown submitter
     */
    long terminated(long submitter);

    /**
     * Expires leases, ends queued requests whose deadline passed or whose submitter was lost, and grants what the
     * windows and pacers allow now, in scheduling order.
     *
     * @return the queued requests answered now ({@link AdmissionOutcome.Granted} or a refusal with its ticket)
     */
    List<AdmissionOutcome> advance();

    /** The clock time when {@link #advance()} may grant more without any return (pacer refill); -1 if none. */
    long nextPacerNanos();

    AdmissionStatus status();

    /**
     * One request for credits.
     *
     * @param bytes 1..{@link AdmissionPolicy#leaseBatchBytesMax()}
     * @param deadlineNanos the owner's clock by which the work must be usable (eligible deadline); a queued request
     *     is refused at it
     * @param remainingWorkBytes the submitter's remaining required work including these bytes (scheduling prefers
     *     the least); at least {@code bytes}
     * @param mayWait whether the request may be queued; otherwise it is granted now or refused
     */
    record LeaseRequest(long bytes, long deadlineNanos, long remainingWorkBytes, boolean mayWait) {
        public LeaseRequest {
            if (bytes < 1) {
                throw new IllegalArgumentException("lease bytes must be >= 1, got " + bytes);
            }
            if (remainingWorkBytes < bytes) {
                throw new IllegalArgumentException("remaining work " + remainingWorkBytes
                        + " bytes must be >= the lease's " + bytes + " bytes");
            }
        }

        /** An immediate request whose remaining work is the request itself. */
        public static LeaseRequest now(long bytes, long deadlineNanos) {
            return new LeaseRequest(bytes, deadlineNanos, bytes, false);
        }
    }
}
