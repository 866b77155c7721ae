package orbitkv.server.runtime;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import orbitkv.index.GlobalIndex;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.membership.CrashPoints;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.ProtocolClock;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.incarnation.AwaitSignals;
import orbitkv.server.incarnation.ClusterMetadata;
import orbitkv.server.incarnation.CurrentIncarnation;
import orbitkv.server.incarnation.ScopeGenerations;
import orbitkv.server.metrics.IncarnationMetricFamilies;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.net.PeerChannels;
import orbitkv.server.net.PeerListener;
import orbitkv.server.transfer.PeerTransfer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running {@code orbitkv manager} with etcd (DESIGN §3, §6, §7): the local cache (tiers reporting to this
 * process's InventorySource), the peer listener, a registered incarnation, the requester GlobalIndex fed by
 * membership views, and the HTTP API answering with distributed metadata.
 *
 * <p>Startup order (after {@link ManagerConfig#from} validated every setting): open the local cache and bind
 * the HTTP listener, which accepts nothing yet ({@link ManagerCore}, shared with the standalone Manager);
 * bind the peer listener (both addresses go into the member record); register (one etcd transaction, MEM-2; a Manager never formats:
 * an unformatted cluster is refused naming {@code orbitkv admin format}); create the index for the
 * registered incarnation and subscribe it to membership (IDX-2, IDX-13); create both InventorySession ends
 * and add the source end to the peer listener (SES-1); start transfer (its authorization service on the peer
 * listener, its data listener beside it); serve HTTP. A local save never waits on any of this
 * (INV-1).
 *
 * <p><b>Transfer</b> (DESIGN §8; issue 13): each incarnation runs a transfer source (its authorization service
 * on the peer listener, its data listener on the peer listener's host) and a requester engine; restores reach
 * them through the incarnation's metadata.
 *
 * <p><b>Healing</b> (issue 17 item 5): a fence is irrevocable for the fenced incarnation (INV-7), and the
 * process keeps serving its local cache meanwhile (INV-10). Unless {@code --self-heal-disabled}, the
 * {@link IncarnationHealer} then retries, with backoff, a registration of a <em>new</em> incarnation at
 * the next node epoch that may replace only the fenced incarnation's own member record
 * ({@link Membership#reregister()}). Once it commits, the process closes the fenced incarnation's transfer (its
 * grants ended at the fence; this frees its data port), starts a new source lineage (a new InventorySource from
 * sequence 1) and re-announces every cached residence into it under fresh sequences
 * ({@link LocalCache#startNewLineage()}: the bytes stay), records the new incarnation in the SSD lock file,
 * builds the new incarnation's index, session ends and transfer, replaces the session and authorization
 * services on the peer listener, and switches the HTTP API to it ({@link CurrentIncarnation}); peers bootstrap
 * it from scratch. The fenced incarnation's ends were closed by its fence and are released.
 *
 * <p>Shutdown (SIGTERM): stop healing, stop HTTP admission, drain, close transfer (the engine asks sources to
 * release what it still tracks; the source ends every grant and closes its data listener), close the
 * subscriber and the session server (their sessions end with {@code SHUTTING_DOWN}), revoke the lease
 * ({@link Membership#close()}: peers exclude this incarnation at once), stop the peer listener, close the tiers.
 */
public final class DistributedManager implements RunningManager {
    private static final Logger LOG = LoggerFactory.getLogger(DistributedManager.class);
    /** Bound on queued cleanup batches of removed owners; beyond it the membership thread runs the batch itself. */
    static final int INDEX_CLEANUP_QUEUE_MAX = 1024;

    /** The outcome of a start: running, or refused with the exit code and the operator's message. */
    public sealed interface Start {
        record Started(DistributedManager manager) implements Start {}

        record Refused(int exitCode, String message) implements Start {}
    }

    private final ManagerCore core;
    private final PeerListener peer;
    /** Shared by every incarnation of this process: the client channels' event loops. */
    private final PeerChannels channels;
    private final ThreadPoolExecutor indexCleanup;
    /**
     * The protocol core's one clock (issue 25): monotonic time, and its timer thread for the sessions' ACK
     * cadence, liveness, receive deadlines and timed waits; the index reads its time for freshness. Shared by
     * every incarnation of this process, shut down last.
     */
    private final ScheduledExecutorService protocolTimer;
    private final ProtocolClock clock;
    private final IncarnationHealer healer;
    private final StopSequence stop = new StopSequence();
    /** Guards the switch to a healed incarnation against shutdown. */
    private final Object switchLock = new Object();
    private CurrentIncarnation metadata;
    private volatile RegisteredIncarnation running;
    private boolean stopping; // guarded by switchLock

    /**
     * One registered incarnation and what exists for it only: membership, the index and its metadata, both
     * session ends, both transfer ends. Its source is the local cache's source at the time it was wired.
     */
    private record RegisteredIncarnation(Membership membership, ClusterMetadata metadata, SessionEnds sessions,
                                         PeerTransfer transfer) {
        void close() {
            transfer.close(); // idempotent: a heal closes the fenced incarnation's transfer before wiring the next
            sessions.close();
            membership.close(); // fenced: releases the client; otherwise revokes the lease
        }
    }

    /**
     * Both InventorySession ends of one incarnation (SES-1); the requester end is whichever scope generation's
     * subscriber runs now (IDX-6).
     */
    private record SessionEnds(InventorySessionServer server, ScopeGenerations scopes, InventorySubscriber subscriber) {
        /**
         * A membership event, after the index has seen it (IDX-13): the server re-checks its requesters
         * (SES-5), the subscriber starts and stops sessions; a fence closes both ends for good (INV-7).
         */
        void onMembershipEvent(MembershipEvent event) {
            if (event instanceof MembershipEvent.Fenced) {
                server.fence();
                subscriber.fence();
                return;
            }
            server.onMembership(event.view());
            subscriber.onMembership(event.view());
        }

        void close() {
            subscriber.close();
            server.close();
        }
    }

    private DistributedManager(ManagerCore core, PeerListener peer, PeerChannels channels, ThreadPoolExecutor indexCleanup,
                               ScheduledExecutorService protocolTimer) {
        this.protocolTimer = protocolTimer;
        this.clock = ProtocolClock.monotonic(protocolTimer);
        this.core = core;
        this.peer = peer;
        this.channels = channels;
        this.indexCleanup = indexCleanup;
        this.healer = new IncarnationHealer(core.config().heal(), this::healOnce);
    }

    /**
     * Starts a distributed Manager. Every setting was validated by {@link ManagerConfig#from} before this
     * runs; nothing here can refuse a setting after the registration consumed a node epoch.
     *
     * @param api binds the API listener (the HTTP adapter's, passed by the process entry point)
     * @throws IllegalArgumentException if {@code config} is standalone
     */
    public static Start start(ManagerConfig config, ApiListener.Binder api) throws IOException, InterruptedException {
        if (config.standalone() || config.etcd().isEmpty()) {
            throw new IllegalArgumentException("DistributedManager needs --cluster/--etcd, not --standalone");
        }
        if (CrashPoints.armed()) {
            LOG.warn("crash points armed by -D{}={}: this process halts at them (fault campaigns only)",
                    CrashPoints.PROPERTY, System.getProperty(CrashPoints.PROPERTY));
        }
        ManagerCore core = ManagerCore.open(config, api);
        PeerListener peer = null;
        try {
            peer = PeerListener.start(config.peerListen(), core.transport(), config.peerTls(),
                    config.peerInboundMessageBytesMax());
            Registrant registrant = new Registrant(config.cluster(), config.nodeId(), advertised(peer.boundAddress()),
                    advertised(core.http().boundAddress()));
            CrashPoints.reach(CrashPoints.Point.BEFORE_REGISTRATION);
            RegistrationResult result = Membership.register(config.etcd().get(), registrant, config.membershipConfig(),
                    ProtocolClock.monotonicTimeOnly()); // membership arms its timers on its own etcd threads
            if (!(result instanceof RegistrationResult.Registered registered)) {
                closeQuietly(core, peer);
                return new Start.Refused(1, refusal(result, config));
            }
            CrashPoints.reach(CrashPoints.Point.AFTER_REGISTRATION);
            core.local().recordIncarnation(registered.membership().incarnation().toString());
            try {
                return new Start.Started(started(core, peer, registered.membership()));
            } catch (IOException | RuntimeException e) {
                registered.membership().close(); // never leave a registered incarnation behind a failed start
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(core, peer);
            throw e;
        }
    }

    private static DistributedManager started(ManagerCore core, PeerListener peer, Membership membership)
            throws IOException {
        ManagerConfig config = core.config();
        ThreadPoolExecutor cleanup = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(INDEX_CLEANUP_QUEUE_MAX),
                Thread.ofPlatform().name("orbitkv-index-cleanup").daemon(true).factory(),
                new ThreadPoolExecutor.CallerRunsPolicy());
        PeerChannels channels = new PeerChannels(core.transport(), config.peerTls(), config.peerInboundMessageBytesMax());
        ScheduledThreadPoolExecutor protocolTimer = new ScheduledThreadPoolExecutor(1,
                Thread.ofPlatform().name("orbitkv-protocol-timer").daemon(true).factory());
        protocolTimer.setRemoveOnCancelPolicy(true); // cancelled wake-ups leave the queue at once
        DistributedManager m = new DistributedManager(core, peer, channels, cleanup, protocolTimer);
        RegisteredIncarnation first;
        try {
            first = m.wire(membership, core.local().source(), config.scope());
        } catch (IOException | RuntimeException e) {
            cleanup.shutdownNow();
            protocolTimer.shutdownNow();
            closeChannels(channels);
            throw e;
        }
        m.metadata = new CurrentIncarnation(first.metadata(), m.healer::report);
        m.running = first;
        m.healer.serving(membership.incarnation().toString());
        m.listen(first);
        IncarnationMetricFamilies.register(core.metrics(), m.metadata); // once; they read the current incarnation
        core.http().serve(m.metadata);
        LOG.info("registered as {} in cluster {} ({}); peer listener {}", membership.incarnation(),
                membership.cluster().name(), membership.cluster().uuid(),
                config.peerTls().isPresent() ? "with mutual TLS" : "in plaintext (trusted cluster)");
        return m;
    }

    /**
     * The index, metadata, session ends and transfer of one registered incarnation over {@code source}; the
     * session and authorization services replace any earlier ones on the peer listener (SES-1).
     *
     * @throws IOException if the transfer data listener cannot bind (the session ends are closed again)
     */
    private RegisteredIncarnation wire(Membership membership, InventorySource source, Scope scope) throws IOException {
        ManagerConfig config = core.config();
        GlobalIndex index = GlobalIndex.create(membership.incarnation(), scope, config.indexConfig(), clock, indexCleanup);
        AwaitSignals signals = AwaitSignals.over(index, config.http().awaitWaitersMax());
        SessionEnds sessions = addPeerServices(config, membership, source, signals, index, scope);
        PeerTransfer transfer;
        try {
            transfer = addTransfer(config, membership);
        } catch (IOException | RuntimeException e) {
            sessions.close();
            throw e;
        }
        ClusterMetadata metadata = new ClusterMetadata(membership, sessions.scopes(), source, signals,
                new ClusterMetadata.Sessions(sessions.subscriber(), sessions.server(),
                        config.sessionConfig().sessionsPerRequesterMax()), transfer);
        return new RegisteredIncarnation(membership, metadata, sessions, transfer);
    }

    /**
     * Transfer (DESIGN §8; issue 13): the source over the tiers (the {@code PayloadSource}) with its authorization
     * service on the peer listener and its data listener on the peer listener's host ({@code --transfer-data-port},
     * named in grants), and the requester engine whose Authorize and Release calls use the peer channels (mutual
     * TLS when configured). Restores reach it through the metadata; status and metrics show both ends.
     */
    private PeerTransfer addTransfer(ManagerConfig config, Membership membership) throws IOException {
        PeerTransfer transfer = PeerTransfer.start(config, core.local().tiers(), membership, channels, core.transport(),
                advertised(peer.boundAddress()).host());
        // Inline: Authorize/Release never block (TransferSource's threading contract), so they run on the event loop.
        peer.addInlineService(transfer.authorizationService()); // same service name: replaces a fenced incarnation's
        return transfer;
    }

    /**
     * Subscribes {@code incarnation}'s ends to its membership; a fence of the running incarnation starts healing.
     * The first delivery is the current view (IDX-2): the index sees it first, then the session ends and transfer
     * (a valid view without a requester ends its grants; a fence fences the source).
     */
    private void listen(RegisteredIncarnation incarnation) {
        incarnation.membership().addListener(event -> {
            incarnation.metadata().onMembershipEvent(event);
            incarnation.sessions().onMembershipEvent(event);
            incarnation.transfer().onMembershipEvent(event);
            if (event instanceof MembershipEvent.Fenced f && running == incarnation) {
                healer.fenced(f.fenced().toString(), f.cause());
            }
        });
    }

    /**
     * Peer services (SES-1): the source end serves {@code orbitkv.inventory.v4.InventorySession} on the peer
     * listener; the requester end runs one session per admitted member (at most {@code --peer-sessions-max},
     * BND-3), applies into {@code signals.viewReceiver()} (the GlobalIndex, waking await waiters) and opens
     * its channels on the native transport (mutual TLS when configured). Await asks it to flush (API-5). A scope
     * change (IDX-6) opens the next generation's sessions the same way into its own index.
     */
    private SessionEnds addPeerServices(ManagerConfig config, Membership membership, InventorySource source,
                                        AwaitSignals signals, GlobalIndex index, Scope scope) {
        SessionConfig sessionConfig = config.sessionConfig();
        InventorySessionServer server = InventorySessionServer.create(source, membership.cluster(),
                membership.incarnation(), membership::view, sessionConfig, clock);
        ScopeGenerations.Subscribers open = (s, receiver) -> InventorySubscriber.create(membership.cluster(),
                membership.incarnation(), s, receiver, channels::open, sessionConfig, clock);
        ScopeGenerations scopes = ScopeGenerations.wired(membership.incarnation(), membership::view, scope, index,
                open.open(scope, signals.viewReceiver()), open, signals, clock);
        peer.addService(server.bindableService()); // same service name: replaces a fenced incarnation's
        return new SessionEnds(server, scopes, scopes.subscriber());
    }

    /**
     * One heal attempt for the fenced running incarnation (called by the healer's thread): register a new
     * incarnation that may replace only the fenced one's record; on success switch the process to it.
     */
    private RegistrationResult healOnce() {
        RegisteredIncarnation fenced = running;
        CrashPoints.reach(CrashPoints.Point.BEFORE_REGISTRATION);
        RegistrationResult result = fenced.membership().reregister();
        if (!(result instanceof RegistrationResult.Registered registered)) {
            return result;
        }
        Membership next = registered.membership();
        CrashPoints.reach(CrashPoints.Point.HEAL_REGISTERED);
        synchronized (switchLock) {
            if (stopping) {
                next.close(); // shutdown won: deregister at once instead of serving
                return result;
            }
            // The fenced incarnation's grants ended at its fence; closing its transfer now frees a fixed data port.
            fenced.transfer().close();
            LocalCache.Lineage lineage = core.local().startNewLineage();
            core.local().recordIncarnation(next.incarnation().toString());
            RegisteredIncarnation healed;
            try {
                // the scope that served when the fence came (a pending change was abandoned by the fence, IDX-6)
                healed = wire(next, lineage.source(), fenced.metadata().scopes().current().scope());
            } catch (IOException | RuntimeException e) {
                next.close(); // never leave a registered incarnation behind a failed wiring; the healer retries
                LOG.warn("wiring the healed incarnation {} failed", next.incarnation(), e);
                return new RegistrationResult.Unavailable("wiring the healed incarnation failed: " + e);
            }
            running = healed;
            metadata.install(healed.metadata());
            healer.serving(next.incarnation().toString());
            listen(healed);
            LOG.info("healed: fenced incarnation {} replaced by {} (node epoch {}); {} cached residences re-announced "
                    + "in a new journal lineage", fenced.membership().incarnation(), next.incarnation(),
                    next.incarnation().epoch().value(), lineage.republished());
        }
        fenced.close();
        return result;
    }

    /** The member record's endpoint for a bound address: a wildcard bind advertises this host's name. */
    static Endpoint advertised(InetSocketAddress bound) {
        InetAddress a = bound.getAddress();
        String host;
        if (a.isAnyLocalAddress()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                throw new IllegalStateException("cannot name this host for a wildcard listener " + bound
                        + "; listen on a specific address", e);
            }
        } else {
            host = a.getHostAddress();
        }
        return new Endpoint(host, bound.getPort());
    }

    static String refusal(RegistrationResult result, ManagerConfig config) {
        return switch (result) {
            case RegistrationResult.Unformatted u -> u.message();
            case RegistrationResult.FormatMismatch f -> f.message();
            case RegistrationResult.ClusterMismatch c -> c.message();
            case RegistrationResult.Contended c -> "node id " + c.nodeId().value()
                    + " was registered concurrently by another process: " + c.detail();
            case RegistrationResult.Superseded s -> s.message();
            case RegistrationResult.TlsRefused t -> "etcd at " + config.etcd().map(EtcdEndpoints::toString).orElse("?")
                    + " refused the registration: " + t.message();
            case RegistrationResult.Unavailable u -> "etcd at " + config.etcd().map(EtcdEndpoints::toString).orElse("?")
                    + " did not answer the registration: " + u.cause();
            case RegistrationResult.Registered r -> throw new IllegalStateException("registered is not a refusal");
        };
    }

    private static void closeChannels(PeerChannels channels) {
        try {
            channels.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(ManagerCore core, PeerListener peer) {
        try {
            if (peer != null) {
                peer.close();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        core.close();
    }

    public InetSocketAddress httpAddress() {
        return core.http().boundAddress();
    }

    public InetSocketAddress peerAddress() {
        return peer.boundAddress();
    }

    /** The membership of the running incarnation (a new one after each heal). */
    public Membership membership() {
        return running.membership();
    }

    @Override
    public String readyLine() {
        return ReadyLine.of(httpAddress(), peerAddress(), running.membership().incarnation(), core.transport(), "distributed");
    }

    @Override
    public boolean shutdown() throws InterruptedException {
        return stop.runOnce(() -> {
            synchronized (switchLock) {
                stopping = true; // no heal switches after this
            }
            healer.close();
            boolean drained = core.stopAndDrain();
            RegisteredIncarnation last = running;
            last.transfer().close(); // no restore runs any more: releases sent, grants ended, data listener closed
            last.sessions().close(); // sessions end with SHUTTING_DOWN before the lease goes
            last.membership().close(); // revokes the lease: the member record goes, peers exclude this incarnation
            LOG.info("deregistered {}", last.membership().incarnation());
            closeChannels(channels);
            closeQuietly(core, peer);
            indexCleanup.shutdownNow();
            protocolTimer.shutdownNow(); // after the sessions: their waits no longer need its wake-ups
            return drained;
        });
    }

    @Override
    public void awaitStopped() throws InterruptedException {
        stop.awaitDone();
    }
}
