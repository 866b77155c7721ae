package orbitkv.server.admission;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.CreditRefusal;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.server.config.AdmissionOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Manager's node-local S6 admission (issue 39; ROUTE-11): the sans-I/O {@link NodeAdmission} owner plus what it
 * needs to run in a process - a pump thread that answers queued requests (returns, pacer refill, deadlines, every
 * {@link #PUMP_MS} ms), waiting for a queued grant with a bound, and this Manager's own submitter whose restore READs
 * charge the rx lane of the NIC it receives on. Engines charge the same owner through {@link #charge} (in process) or
 * the {@code /admission/*} HTTP endpoints. Thread-safe.
 */
public final class NodeAdmissionService implements AutoCloseable {
    /** The pump's period: queued requests are answered at most this late after capacity appears. */
    public static final long PUMP_MS = 2;
    /** The shortest pacer wake-up (50 µs): below it the pump would spin. */
    private static final long PACER_WAKE_MIN_NS = 50_000;
    private static final Logger LOG = LoggerFactory.getLogger(NodeAdmissionService.class);

    private final NodeAdmission owner;
    private final Optional<NicLane> managerLane;
    private final long managerSubmitter;
    /** This Manager as a source: its peer-serving egress, charged to the tx lane of the data listener's NIC. */
    private final long egressSubmitter;
    /** The admitted tx lanes by NIC name (bounded by the policy's lanes). */
    private final Map<String, NicLane> txLanes;
    private final Map<Long, CompletableFuture<AdmissionOutcome>> waiting = new ConcurrentHashMap<>();
    private final Thread pump;
    private volatile boolean closed;

    NodeAdmissionService(NodeAdmission owner, Optional<NicLane> managerLane) {
        this.owner = owner;
        this.managerLane = managerLane;
        this.managerSubmitter = ((AdmissionOutcome.Registered) owner.register(SubmitterKind.MANAGER_READ, "manager"))
                .submitter();
        this.egressSubmitter = ((AdmissionOutcome.Registered) owner.register(SubmitterKind.MANAGER_EGRESS, "manager"))
                .submitter();
        this.txLanes = owner.policy().lanes().keySet().stream().filter(l -> l.direction() == NicLane.Direction.TX)
                .collect(java.util.stream.Collectors.toUnmodifiableMap(NicLane::nic, l -> l));
        this.pump = Thread.ofPlatform().daemon().name("orbitkv-admission").start(this::pumpLoop);
    }

    /**
     * The pump thread: answers queued requests every {@link #PUMP_MS} ms, and exactly when a paced lane's pacer holds
     * the tokens its best request needs (a late wake-up would lose tokens to the bucket's cap, and with them link rate).
     */
    private void pumpLoop() {
        while (!closed) {
            pump();
            long now = System.nanoTime();
            long wait = TimeUnit.MILLISECONDS.toNanos(PUMP_MS);
            long next = owner.nextPacerNanos();
            if (next >= 0) {
                wait = Math.max(PACER_WAKE_MIN_NS, Math.min(wait, next - now));
            }
            LockSupport.parkNanos(wait);
        }
    }

    /**
     * The service of {@code options}, or empty with {@code --admission-disabled}.
     *
     * @param peerHost the {@code --peer-listen} host: its NIC's rx lane takes this Manager's READ credits
     */
    public static Optional<NodeAdmissionService> start(AdmissionOptions options, String peerHost) {
        if (!options.enabled()) {
            LOG.info("admission: disabled (--admission-disabled)");
            return Optional.empty();
        }
        Optional<NicLane> lane = readNic(options, peerHost).map(n -> new NicLane(n, NicLane.Direction.RX));
        LOG.info("admission: NICs {}, window {} bytes per lane ({} % reserve), Manager READs charge {}",
                options.nicPaces(), options.windowBytesMax(), options.reservePercent(),
                lane.map(NicLane::toString).orElse("nothing (the peer host's NIC is not in --admission-nics)"));
        return Optional.of(new NodeAdmissionService(NodeAdmission.create(options.policy(), System::nanoTime), lane));
    }

    /** The NIC of {@code host} if it is admitted; a wildcard host: the first NIC listed. */
    static Optional<String> readNic(AdmissionOptions options, String host) {
        try {
            InetAddress a = InetAddress.getByName(host);
            if (a.isAnyLocalAddress()) {
                return Optional.of(options.firstNic());
            }
            NetworkInterface nic = NetworkInterface.getByInetAddress(a);
            return nic != null && options.nicPaces().containsKey(nic.getName()) ? Optional.of(nic.getName())
                    : Optional.empty();
        } catch (UnknownHostException | SocketException e) {
            LOG.warn("admission: cannot find the NIC of {}: {}", host, e.toString());
            return Optional.empty();
        }
    }

    public NodeAdmission owner() {
        return owner;
    }

    /** The lane this Manager's restore READs charge, empty when its NIC is not admitted. */
    public Optional<NicLane> managerReadLane() {
        return managerLane;
    }

    /**
     * Charges {@code bytes} of this Manager's restore READs to its rx lane at once (never waits), in leases of at most
     * one batch each; all or nothing.
     *
     * @return the leases, or a refusal (nothing charged)
     */
    public ManagerCharge chargeManagerRead(long bytes) {
        return managerLane.map(lane -> chargeNow(managerSubmitter, lane, bytes)).orElse(NOTHING);
    }

    private static final ManagerCharge NOTHING = new ManagerCharge(List.of(), null);

    /**
     * Whether a peer route's first READ ({@code bytes}) fits this Manager's READ lane beside everything charged now
     * (ROUTE-11: asked before the route's authorization, so a lane that engines or other routes hold refuses the route
     * by name before a source grants and pins anything). Charges nothing; nothing to say when the lane is not admitted.
     *
     * @return empty when it fits, else the refusal ({@code window-full}, counted)
     */
    public Optional<AdmissionOutcome.Refused> managerReadRoom(long bytes) {
        return managerLane.flatMap(lane -> owner.room(lane, bytes));
    }

    /**
     * Charges one restore READ of {@code bytes} to this Manager's READ lane, waiting in the lane's scheduling order
     * (earliest deadline, least remaining work, fairness, aging; the pacer) until {@code deadlineNanos} at most: the
     * answer completes when granted, or refused ({@code deadline-passed}, {@code queue-full}, ...). A READ above one
     * lease batch cannot wait without holding part of the window while it waits, so it is charged at once in batches
     * or refused. Nothing is charged when the lane is not admitted.
     *
     * @param remainingBytes the route's READ bytes not yet charged, these included (scheduling prefers the least)
     */
    public CompletableFuture<ManagerCharge> chargeManagerReadAsync(long bytes, long deadlineNanos, long remainingBytes) {
        if (managerLane.isEmpty()) {
            return CompletableFuture.completedFuture(NOTHING);
        }
        NicLane lane = managerLane.get();
        if (bytes > owner.policy().leaseBatchBytesMax()) {
            return CompletableFuture.completedFuture(chargeNow(managerSubmitter, lane, bytes));
        }
        AdmissionOutcome o = owner.lease(managerSubmitter, lane,
                new NodeAdmission.LeaseRequest(bytes, deadlineNanos, Math.max(bytes, remainingBytes), true));
        if (!(o instanceof AdmissionOutcome.Queued q)) {
            return CompletableFuture.completedFuture(managerCharge(o));
        }
        CompletableFuture<AdmissionOutcome> f = waiting.computeIfAbsent(q.ticket(), t -> new CompletableFuture<>());
        f.whenComplete((r, x) -> waiting.remove(q.ticket()));
        pump();
        return f.thenApply(NodeAdmissionService::managerCharge);
    }

    private static ManagerCharge managerCharge(AdmissionOutcome o) {
        return switch (o) {
            case AdmissionOutcome.Granted g -> new ManagerCharge(List.of(g.lease()), null);
            case AdmissionOutcome.Refused r -> new ManagerCharge(List.of(), r);
            default -> throw new IllegalStateException("unexpected admission answer " + o);
        };
    }

    /** Returns a READ charge whose READ was never submitted (its route ended first): live and unexpired, trusted. */
    public void returnManagerReadUnused(ManagerCharge charge, long bytes) {
        returnCharge(managerSubmitter, charge, bytes, ReturnEvidence.NEVER_SUBMITTED);
    }

    /** Charges {@code bytes} to {@code lane} at once in leases of at most one batch; all or nothing. */
    private ManagerCharge chargeNow(long submitter, NicLane lane, long bytes) {
        long batch = owner.policy().leaseBatchBytesMax();
        List<Long> leases = new ArrayList<>();
        for (long left = bytes; left > 0; left -= batch) {
            long take = Math.min(left, batch);
            AdmissionOutcome o = owner.lease(submitter, lane, NodeAdmission.LeaseRequest.now(take, Long.MAX_VALUE));
            if (!(o instanceof AdmissionOutcome.Granted g)) {
                leases.forEach(l -> owner.returnBytes(submitter, l, leaseBytes(l, batch, bytes, leases),
                        ReturnEvidence.NEVER_SUBMITTED));
                return new ManagerCharge(List.of(), (AdmissionOutcome.Refused) o);
            }
            leases.add(g.lease());
        }
        return new ManagerCharge(List.copyOf(leases), null);
    }

    /** The bytes of the {@code i}-th lease of a charge split in batches (all but the last hold a whole batch). */
    private static long leaseBytes(long lease, long batch, long bytes, List<Long> leases) {
        int i = leases.indexOf(lease);
        return Math.min(batch, bytes - i * batch);
    }

    /**
     * Returns a Manager READ charge once its READs physically ended (drain, INV-8): the transport's terminal
     * evidence.
     */
    public void returnManagerRead(ManagerCharge charge, long bytes) {
        returnCharge(managerSubmitter, charge, bytes, ReturnEvidence.TRANSPORT_PROGRESS);
    }

    private void returnCharge(long submitter, ManagerCharge charge, long bytes, ReturnEvidence evidence) {
        long batch = owner.policy().leaseBatchBytesMax();
        for (long lease : charge.leases()) {
            owner.returnBytes(submitter, lease, leaseBytes(lease, batch, bytes, charge.leases()), evidence);
        }
        if (!charge.leases().isEmpty()) {
            pump();
        }
    }

    /**
     * The tx lane of {@code nic} when it is admitted: where this Manager's peer-serving egress on that NIC is charged
     * (issue 39 item 2).
     */
    public Optional<NicLane> egressLane(String nic) {
        return Optional.ofNullable(txLanes.get(nic));
    }

    /**
     * Charges {@code bytes} of one send of this Manager's transfer source to the tx lane of {@code nic} at once (never
     * waits: it runs on a data event loop), in leases of at most one batch; all or nothing. Nothing is charged on a NIC
     * that is not admitted.
     *
     * @return the leases, or a refusal (nothing charged)
     */
    public ManagerCharge chargeManagerEgress(String nic, long bytes) {
        return egressLane(nic).map(lane -> chargeNow(egressSubmitter, lane, bytes)).orElse(NOTHING);
    }

    /** Returns an egress charge at the send's physical end (written out or failed: the transport's evidence). */
    public void returnManagerEgress(ManagerCharge charge, long bytes) {
        returnCharge(egressSubmitter, charge, bytes, ReturnEvidence.TRANSPORT_PROGRESS);
    }

    /** A Manager READ charge: its leases (empty when nothing was charged) or the refusal. */
    public record ManagerCharge(List<Long> leases, AdmissionOutcome.Refused refused) {
        public boolean granted() {
            return refused == null;
        }
    }

    /** Registers an engine (or other) submitter. */
    public AdmissionOutcome register(SubmitterKind kind, String instance) {
        return owner.register(kind, instance);
    }

    /**
     * Asks for credits; a request that may wait is queued and waited for at most {@code waitMs} (then withdrawn and
     * refused as {@link CreditRefusal#DEADLINE_PASSED} when still queued).
     *
     * @throws IllegalArgumentException for bad input (nothing changes)
     */
    public AdmissionOutcome charge(long submitter, NicLane lane, NodeAdmission.LeaseRequest request, long waitMs)
            throws InterruptedException {
        AdmissionOutcome o = owner.lease(submitter, lane, request);
        if (!(o instanceof AdmissionOutcome.Queued q)) {
            return o;
        }
        CompletableFuture<AdmissionOutcome> f = waiting.computeIfAbsent(q.ticket(), t -> new CompletableFuture<>());
        pump();
        try {
            return f.get(Math.max(0, waitMs), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            if (owner.cancel(q.ticket())) {
                waiting.remove(q.ticket());
                return new AdmissionOutcome.Refused(CreditRefusal.DEADLINE_PASSED, q.ticket(),
                        "deadline-passed: still queued after " + waitMs + " ms");
            }
            return join(f);
        } catch (InterruptedException e) {
            // withdrawn, or answered already: a grant nobody will use goes back at once (live, unexpired: trusted)
            if (!owner.cancel(q.ticket()) && join(f) instanceof AdmissionOutcome.Granted g) {
                owner.returnBytes(submitter, g.lease(), g.bytes(), ReturnEvidence.NEVER_SUBMITTED);
            }
            throw e;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } finally {
            waiting.remove(q.ticket());
        }
    }

    /** The answer of a ticket the owner has answered already: the pump completes it (at once, or after its advance). */
    private static AdmissionOutcome join(CompletableFuture<AdmissionOutcome> f) {
        return f.join();
    }

    /** Returns leased bytes with evidence, then serves what they freed. */
    public AdmissionOutcome returnBytes(long submitter, long lease, long bytes, ReturnEvidence evidence) {
        AdmissionOutcome o = owner.returnBytes(submitter, lease, bytes, evidence);
        pump();
        return o;
    }

    /** Termination evidence: everything the submitter holds returns. */
    public long terminated(long submitter) {
        long bytes = owner.terminated(submitter);
        pump();
        return bytes;
    }

    /** The submitter vanished without evidence: its bytes stay charged (quarantined). */
    public void lost(long submitter) {
        owner.lost(submitter);
        pump();
    }

    public AdmissionStatus status() {
        return owner.status();
    }

    /**
     * Answers queued requests whose outcome is known now; a waiter not yet registered finds its answer on arrival.
     * Answers are completed outside any lock of this service: an asynchronous waiter's continuation (a READ's
     * submission) runs on the completing thread.
     */
    private void pump() {
        for (AdmissionOutcome o : owner.advance()) {
            long ticket = o instanceof AdmissionOutcome.Granted g ? g.ticket() : ((AdmissionOutcome.Refused) o).ticket();
            waiting.computeIfAbsent(ticket, t -> new CompletableFuture<>()).complete(o);
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(pump);
    }
}
