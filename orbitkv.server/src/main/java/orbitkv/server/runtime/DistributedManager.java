package orbitkv.server.runtime;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import orbitkv.index.GlobalIndex;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.SessionConfig;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipEvent;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.http.ClusterMetadata;
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
 * <p>Shutdown (SIGTERM): stop HTTP admission, drain, close transfer (the engine asks sources to release what it
 * still tracks; the source ends every grant and closes its data listener), close the subscriber and the session server (their
 * sessions end with {@code SHUTTING_DOWN}), revoke the lease ({@link Membership#close()}: peers exclude this
 * incarnation at once), stop the peer listener, close the tiers.
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
    private final Membership membership;
    private final ThreadPoolExecutor indexCleanup;
    private final ClusterMetadata metadata;
    private final SessionEnds sessions;
    private final PeerTransfer transfer;
    private final StopSequence stop = new StopSequence();

    /** Both InventorySession ends of this Manager and the client channels' event loops (SES-1). */
    private record SessionEnds(InventorySessionServer server, InventorySubscriber subscriber, PeerChannels channels) {
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
            try {
                channels.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private DistributedManager(ManagerCore core, PeerListener peer, Membership membership, ThreadPoolExecutor indexCleanup,
                               ClusterMetadata metadata, SessionEnds sessions, PeerTransfer transfer) {
        this.core = core;
        this.peer = peer;
        this.membership = membership;
        this.indexCleanup = indexCleanup;
        this.metadata = metadata;
        this.sessions = sessions;
        this.transfer = transfer;
    }

    /**
     * Starts a distributed Manager. Every setting was validated by {@link ManagerConfig#from} before this
     * runs; nothing here can refuse a setting after the registration consumed a node epoch.
     *
     * @throws IllegalArgumentException if {@code config} is standalone
     */
    public static Start start(ManagerConfig config) throws IOException, InterruptedException {
        if (config.standalone() || config.etcd().isEmpty()) {
            throw new IllegalArgumentException("DistributedManager needs --cluster/--etcd, not --standalone");
        }
        ManagerCore core = ManagerCore.open(config);
        PeerListener peer = null;
        try {
            peer = PeerListener.start(config.peerListen(), core.transport(), config.peerTls(),
                    config.peerInboundMessageBytesMax());
            Registrant registrant = new Registrant(config.cluster(), config.nodeId(), advertised(peer.boundAddress()),
                    advertised(core.http().boundAddress()));
            RegistrationResult result = Membership.register(config.etcd().get(), registrant, config.membershipConfig());
            if (!(result instanceof RegistrationResult.Registered registered)) {
                closeQuietly(core, peer);
                return new Start.Refused(1, refusal(result, config));
            }
            core.local().recordIncarnation(registered.membership().incarnation().toString());
            try {
                return new Start.Started(wire(core, peer, registered.membership()));
            } catch (IOException | RuntimeException e) {
                registered.membership().close(); // never leave a registered incarnation behind a failed start
                throw e;
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(core, peer);
            throw e;
        }
    }

    private static DistributedManager wire(ManagerCore core, PeerListener peer, Membership membership)
            throws IOException {
        ManagerConfig config = core.config();
        LocalCache local = core.local();
        ThreadPoolExecutor cleanup = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(INDEX_CLEANUP_QUEUE_MAX),
                Thread.ofPlatform().name("orbitkv-index-cleanup").daemon(true).factory(),
                new ThreadPoolExecutor.CallerRunsPolicy());
        GlobalIndex index = GlobalIndex.create(membership.incarnation(), config.scope(), config.indexConfig(),
                System::nanoTime, cleanup);
        ClusterMetadata metadata = new ClusterMetadata(membership, index, local.source(), config.scope(),
                config.http().awaitWaitersMax());
        SessionEnds sessions = addPeerServices(config, peer, membership, local, metadata, core.transport());
        PeerTransfer transfer;
        try {
            transfer = addTransfer(config, peer, membership, local, metadata, sessions, core.transport());
        } catch (IOException | RuntimeException e) {
            sessions.close();
            cleanup.shutdownNow();
            throw e;
        }
        // The first delivery is the current view (IDX-2): the index sees it first, then the session ends and
        // transfer (a valid view without a requester ends its grants; a fence fences the source).
        membership.addListener(event -> {
            metadata.onMembershipEvent(event);
            sessions.onMembershipEvent(event);
            transfer.onMembershipEvent(event);
        });
        core.http().serve(metadata); // registers the metrics once, the sessions' included
        LOG.info("registered as {} in cluster {} ({}); peer listener {}", membership.incarnation(),
                membership.cluster().name(), membership.cluster().uuid(),
                config.peerTls().isPresent() ? "with mutual TLS" : "in plaintext (trusted cluster)");
        return new DistributedManager(core, peer, membership, cleanup, metadata, sessions, transfer);
    }

    /**
     * Transfer (DESIGN §8; issue 13): the source over the tiers (the {@code PayloadSource}) with its authorization
     * service on the peer listener and its data listener on the peer listener's host ({@code --transfer-data-port},
     * named in grants), and the requester engine whose Authorize and Release calls use the peer channels (mutual
     * TLS when configured). Restores reach it through the metadata; status and metrics show both ends.
     */
    private static PeerTransfer addTransfer(ManagerConfig config, PeerListener peer, Membership membership,
                                            LocalCache local, ClusterMetadata metadata, SessionEnds sessions,
                                            NativeTransport transport) throws IOException {
        PeerTransfer transfer = PeerTransfer.start(config, local.tiers(), membership, sessions.channels(), transport,
                advertised(peer.boundAddress()).host());
        metadata.attachTransfer(transfer);
        peer.addService(transfer.authorizationService());
        return transfer;
    }

    /**
     * Peer services (SES-1): the source end serves {@code orbitkv.inventory.v4.InventorySession} on the peer
     * listener; the requester end runs one session per admitted member (at most {@code --peer-sessions-max},
     * BND-3), applies into {@code metadata.viewReceiver()} (the GlobalIndex, waking await waiters) and opens
     * its channels on the native transport (mutual TLS when configured). Await asks it to flush (API-5).
     */
    private static SessionEnds addPeerServices(ManagerConfig config, PeerListener peer, Membership membership,
                                               LocalCache local, ClusterMetadata metadata, NativeTransport transport) {
        SessionConfig sessionConfig = config.sessionConfig();
        InventorySessionServer server = InventorySessionServer.create(local.source(), membership.cluster(),
                membership.incarnation(), membership::view, sessionConfig);
        PeerChannels channels = new PeerChannels(transport, config.peerTls(), config.peerInboundMessageBytesMax());
        InventorySubscriber subscriber = InventorySubscriber.create(membership.cluster(), membership.incarnation(),
                config.scope(), metadata.viewReceiver(), channels::open, sessionConfig);
        metadata.attachSessions(new ClusterMetadata.Sessions(subscriber, server, sessionConfig.sessionsPerRequesterMax()));
        peer.addService(server.bindableService());
        return new SessionEnds(server, subscriber, channels);
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

    private static String refusal(RegistrationResult result, ManagerConfig config) {
        return switch (result) {
            case RegistrationResult.Unformatted u -> u.message();
            case RegistrationResult.FormatMismatch f -> f.message();
            case RegistrationResult.ClusterMismatch c -> c.message();
            case RegistrationResult.Contended c -> "node id " + c.nodeId().value()
                    + " was registered concurrently by another process: " + c.detail();
            case RegistrationResult.Unavailable u -> "etcd at " + config.etcd().map(EtcdEndpoints::toString).orElse("?")
                    + " did not answer the registration: " + u.cause();
            case RegistrationResult.Registered r -> throw new IllegalStateException("registered is not a refusal");
        };
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

    public Membership membership() {
        return membership;
    }

    @Override
    public String readyLine() {
        return ReadyLine.of(httpAddress(), peerAddress(), membership.incarnation(), core.transport(), "distributed");
    }

    @Override
    public boolean shutdown() throws InterruptedException {
        return stop.runOnce(() -> {
            boolean drained = core.stopAndDrain();
            transfer.close(); // no restore runs any more: releases sent, grants ended, data listener closed
            sessions.close(); // sessions end with SHUTTING_DOWN before the lease goes
            membership.close(); // revokes the lease: the member record goes, peers exclude this incarnation
            LOG.info("deregistered {}", membership.incarnation());
            closeQuietly(core, peer);
            indexCleanup.shutdownNow();
            return drained;
        });
    }

    @Override
    public void awaitStopped() throws InterruptedException {
        stop.awaitDone();
    }
}
