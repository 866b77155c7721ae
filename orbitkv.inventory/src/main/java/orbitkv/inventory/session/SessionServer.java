package orbitkv.inventory.session;

import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Supplier;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.SessionLimitRefusals;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionMetrics;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.codec.EncodedFrame;
import orbitkv.inventory.source.SourceInventory;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.ProtocolClock;

/**
 * The source's session registry (SES-1, SES-2, SES-6): at most one live session per requester incarnation
 * (a newer Open replaces the older session, whose later frames then never reach the replacement), at most
 * {@code sessionsPerSourceMax} sessions ({@code SESSION_LIMIT} beyond), a bounded memory of committed view
 * ids for resume (SNAP-8). The service is built by hand so requester frames are bounded by encoded size
 * before they are parsed (SES-10), and so source frames leave as pre-encoded bytes ({@link EncodedFrame}:
 * data frames are written by {@code SourceFrameEncoder} without protobuf message objects).
 */
public final class SessionServer implements InventorySessionServer {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SessionServer.class);
    /** At most one SESSION_LIMIT episode line per this interval; the lines held back are counted into the next. */
    static final long LIMIT_LOG_INTERVAL_NANOS = 1_000_000_000L;
    private final SourceInventory source;
    private final ClusterIdentity cluster;
    private final Incarnation self;
    private final Supplier<MembershipView> membership;
    private final SessionConfig config;
    private final SourceCounters counters = new SourceCounters();
    /** The shared scheduling of this source's send work (ROUTE-10): which session's pump step runs next. */
    private final SendGate<SourceSession> sendGate;
    /** Time of every session of this server (liveness, coalescing windows, backoff pauses, timed waits). */
    private final ProtocolClock clock;
    /** Guarded by this server's monitor, as are {@link #committedViews}, {@link #fenced} and {@link #shut}. */
    private final Map<Incarnation, SourceSession> sessions = new HashMap<>();
    private final LinkedHashMap<UUID, Boolean> committedViews;
    private boolean fenced;
    private boolean shut;
    /** Members in an open SESSION_LIMIT episode (issue 33), in first-refusal order; bounded. Guarded by this. */
    private final LinkedHashMap<Incarnation, Boolean> limitRefused = new LinkedHashMap<>();
    private long limitEpisodes;
    private long limitUntracked;
    private long limitLastLogNanos;
    private boolean limitLogged;
    private long limitHeldBack;

    private SessionServer(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config, ProtocolClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.source = SourceInventory.of(Objects.requireNonNull(source, "source"));
        this.cluster = Objects.requireNonNull(cluster, "cluster");
        this.self = Objects.requireNonNull(self, "self");
        this.membership = Objects.requireNonNull(membership, "membership");
        this.config = Objects.requireNonNull(config, "config");
        config.requireCompatible(source.config());
        this.sendGate = new SendGate<>(config.sendStepsConcurrentMax(), config.sessionsPerSourceMax(), config.sendPriority());
        int max = config.committedViewsMax();
        this.committedViews = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<UUID, Boolean> eldest) {
                return size() > max;
            }
        };
    }

    public static InventorySessionServer create(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config) {
        // the source end arms no timer (its pumps wait on their own threads), so the monotonic time alone serves it
        return new SessionServer(source, cluster, self, membership, config, ProtocolClock.monotonicTimeOnly());
    }

    /** As {@link #create(InventorySource, ClusterIdentity, Incarnation, Supplier, SessionConfig)} on {@code clock}, which the caller owns. */
    public static InventorySessionServer create(InventorySource source, ClusterIdentity cluster, Incarnation self,
            Supplier<MembershipView> membership, SessionConfig config, ProtocolClock clock) {
        return new SessionServer(source, cluster, self, membership, config, clock);
    }

    @Override
    public BindableService bindableService() {
        MethodDescriptor<Inbound<RequesterFrame>, EncodedFrame> method = InventorySessionGrpc.getSessionMethod().toBuilder(
                Inbound.marshaller(RequesterFrame.parser(), config.openEncodedBytesMax()),
                EncodedFrame.marshaller()).build();
        ServerServiceDefinition def = ServerServiceDefinition.builder(InventorySessionGrpc.SERVICE_NAME)
                .addMethod(method, ServerCalls.asyncBidiStreamingCall(
                        out -> new SourceSession(this, (ServerCallStreamObserver<EncodedFrame>) out)))
                .build();
        return () -> def;
    }

    ProtocolClock clock() {
        return clock;
    }

    SessionConfig config() {
        return config;
    }

    SendGate<SourceSession> sendGate() {
        return sendGate;
    }

    SourceInventory source() {
        return source;
    }

    SourceCounters counters() {
        return counters;
    }

    ClusterIdentity cluster() {
        return cluster;
    }

    Incarnation self() {
        return self;
    }

    MembershipView membership() {
        return membership.get();
    }

    /**
     * {@code FENCED} once {@link #fence} ran, else {@code SHUTTING_DOWN} once {@link #close} ran, else null. Checked
     * before an Open is validated: a closing source revokes its lease right after closing its sessions, and an
     * Open arriving then must name the cause the protocol documents, not the {@code MEMBERSHIP_SUSPENDED} that the
     * departed lease would otherwise produce (issue 26 G12).
     */
    synchronized ErrorCause stoppedCause() {
        return fenced ? ErrorCause.FENCED : shut ? ErrorCause.SHUTTING_DOWN : null;
    }

    /** Registers an opened session, replacing an older one of the same requester (SES-6); null if admitted. */
    ErrorCause admit(SourceSession s) {
        SourceSession replaced;
        synchronized (this) {
            ErrorCause stopped = stoppedCause();
            if (stopped != null) {
                return stopped;
            }
            replaced = sessions.get(s.requester());
            if (replaced == null && sessions.size() >= config.sessionsPerSourceMax()) {
                limitRefusal(s.requester());
                return ErrorCause.SESSION_LIMIT;
            }
            sessions.put(s.requester(), s);
            if (limitRefused.remove(s.requester()) != null) {
                LOG.info("serving member {} again after SESSION_LIMIT refusals", s.requester());
            }
        }
        if (replaced != null) {
            replaced.fail(ErrorCause.SESSION_MISMATCH, "replaced by a newer session of the same requester");
        }
        return null;
    }

    /**
     * An Open of {@code requester}, a current member (OpenCheck admitted it), refused beyond --source-sessions-max:
     * the first refusal of an episode is listed, counted and logged (at most one line per
     * {@link #LIMIT_LOG_INTERVAL_NANOS}; lines held back are counted into the next). Caller holds this monitor.
     */
    private void limitRefusal(Incarnation requester) {
        if (limitRefused.containsKey(requester)) {
            return; // the episode is logged already: the requester retries with backoff
        }
        limitEpisodes++;
        if (limitRefused.size() < SessionLimitRefusals.MEMBERS_MAX) {
            limitRefused.put(requester, Boolean.TRUE);
        } else {
            limitUntracked++;
        }
        long now = clock.nanoTime();
        if (limitLogged && now - limitLastLogNanos < LIMIT_LOG_INTERVAL_NANOS) {
            limitHeldBack++;
            return;
        }
        LOG.warn("refusing the InventorySession of current member {} with SESSION_LIMIT: this source already serves "
                        + "--source-sessions-max ({}) sessions, so that member's coverage of this source stays PartialHints "
                        + "until a session ends or the limit is raised (BND-3){}", requester,
                config.sessionsPerSourceMax(), limitHeldBack == 0 ? "" : "; " + limitHeldBack
                        + " more members were first refused since the last such line");
        limitLogged = true;
        limitLastLogNanos = now;
        limitHeldBack = 0;
    }

    @Override
    public synchronized SessionLimitRefusals sessionLimitRefusals() {
        return new SessionLimitRefusals(List.copyOf(limitRefused.keySet()), limitEpisodes, limitUntracked);
    }

    synchronized void removed(SourceSession s) {
        Incarnation r = s.requester();
        if (r != null && sessions.get(r) == s) {
            sessions.remove(r);
        }
    }

    synchronized void committed(UUID viewId) {
        committedViews.put(viewId, Boolean.TRUE);
    }

    synchronized boolean isCommittedView(UUID viewId) {
        return committedViews.containsKey(viewId);
    }

    private synchronized List<SourceSession> live() {
        return new ArrayList<>(sessions.values());
    }

    @Override
    public void onMembership(MembershipView view) {
        synchronized (this) { // a member that left ends its episode; a suspended view decides nothing
            if (view.valid()) {
                limitRefused.keySet().removeIf(i -> !view.isAdmitted(i));
            }
        }
        for (SourceSession s : live()) {
            if (!view.valid()) {
                s.fail(ErrorCause.MEMBERSHIP_SUSPENDED, "membership is suspended; no remote admission");
            } else if (!view.isAdmitted(s.requester())) {
                s.fail(ErrorCause.UNKNOWN_REQUESTER_INCARNATION, "requester " + s.requester() + " is no longer admitted");
            } else if (!view.isAdmitted(self)) {
                s.fail(ErrorCause.MEMBERSHIP_SUSPENDED, "this source incarnation is not admitted by its view");
            }
        }
    }

    @Override
    public void fence() {
        synchronized (this) {
            fenced = true;
        }
        for (SourceSession s : live()) {
            s.fail(ErrorCause.FENCED, "source incarnation " + self + " is fenced");
        }
    }

    @Override
    public List<SourceSessionStatus> status() {
        return live().stream().map(SourceSession::status).toList();
    }

    @Override
    public SourceSessionMetrics metrics() {
        return counters.snapshot().withSendScheduling(sendGate.yields(), sendGate.refusals());
    }

    @Override
    public void close() {
        synchronized (this) {
            shut = true;
        }
        for (SourceSession s : live()) {
            s.fail(ErrorCause.SHUTTING_DOWN, "source is shutting down");
        }
    }
}
