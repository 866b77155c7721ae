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
import orbitkv.server.http.HttpApiServer;
import orbitkv.server.net.NativeTransport;
import orbitkv.server.net.PeerChannels;
import orbitkv.server.net.PeerListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running {@code orbitkv manager} with etcd (DESIGN §3, §6, §7): the local cache (tiers reporting to this
 * process's InventorySource), the peer listener, a registered incarnation, the requester GlobalIndex fed by
 * membership views, and the HTTP API answering with distributed metadata.
 *
 * <p>Startup order: open the local cache; bind the peer and HTTP listeners (their addresses go into the
 * member record; HTTP accepts nothing yet); register (one etcd transaction, MEM-2; a Manager never formats:
 * an unformatted cluster is refused naming {@code orbitkv admin format}); create the index for the
 * registered incarnation and subscribe it to membership (IDX-2, IDX-13); create both InventorySession ends
 * and add the source end to the peer listener (SES-1); serve HTTP. A local save never waits on any of this
 * (INV-1).
 *
 * <p>Shutdown (SIGTERM): stop HTTP admission, drain, close the subscriber and the session server (their
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

    private final ManagerConfig config;
    private final LocalCache local;
    private final PeerListener peer;
    private final HttpApiServer http;
    private final Membership membership;
    private final ThreadPoolExecutor indexCleanup;
    private final ClusterMetadata metadata;
    private final NativeTransport transport;
    private final SessionEnds sessions;
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

    private DistributedManager(ManagerConfig config, LocalCache local, PeerListener peer, HttpApiServer http,
                               Membership membership, ThreadPoolExecutor indexCleanup, ClusterMetadata metadata,
                               NativeTransport transport, SessionEnds sessions) {
        this.config = config;
        this.local = local;
        this.peer = peer;
        this.http = http;
        this.membership = membership;
        this.indexCleanup = indexCleanup;
        this.metadata = metadata;
        this.transport = transport;
        this.sessions = sessions;
    }

    /**
     * Starts a distributed Manager.
     *
     * @throws IllegalArgumentException if {@code config} is standalone
     */
    public static Start start(ManagerConfig config) throws IOException, InterruptedException {
        if (config.standalone()) {
            throw new IllegalArgumentException("DistributedManager needs --cluster/--etcd, not --standalone");
        }
        NativeTransport transport = NativeTransport.detect();
        LocalCache local = LocalCache.open(config);
        PeerListener peer = null;
        HttpApiServer http = null;
        try {
            peer = PeerListener.start(config.peerListen(), transport);
            http = HttpApiServer.bind(config, local.tiers(), transport);
            Registrant registrant = new Registrant(config.cluster(), config.nodeId(), advertised(peer.boundAddress()),
                    advertised(http.boundAddress()));
            RegistrationResult result = Membership.register(new EtcdEndpoints(config.etcdEndpoints()), registrant,
                    config.lease());
            if (!(result instanceof RegistrationResult.Registered registered)) {
                closeQuietly(http, peer, local);
                return new Start.Refused(1, refusal(result, config));
            }
            try {
                return new Start.Started(wire(config, local, peer, http, registered.membership(), transport));
            } catch (SessionBoundsRefused e) { // the session refuses the source's bounds (BND-6)
                registered.membership().close();
                closeQuietly(http, peer, local);
                return new Start.Refused(2, "session settings refused: " + ManagerConfig.sessionOptionNames(e.getMessage()));
            } catch (RuntimeException e) {
                registered.membership().close(); // never leave a registered incarnation behind a failed start
                throw e;
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeQuietly(http, peer, local);
            throw e;
        }
    }

    private static DistributedManager wire(ManagerConfig config, LocalCache local, PeerListener peer, HttpApiServer http,
                                           Membership membership, NativeTransport transport) {
        ThreadPoolExecutor cleanup = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(INDEX_CLEANUP_QUEUE_MAX),
                Thread.ofPlatform().name("orbitkv-index-cleanup").daemon(true).factory(),
                new ThreadPoolExecutor.CallerRunsPolicy());
        GlobalIndex index = GlobalIndex.create(membership.incarnation(), config.scope(), config.indexConfig(),
                System::nanoTime, cleanup);
        ClusterMetadata metadata = new ClusterMetadata(membership, index, local.source(), config.scope(),
                config.http().awaitWaitersMax());
        SessionEnds sessions = addPeerServices(config, peer, membership, local, metadata, transport);
        // The first delivery is the current view (IDX-2): the index sees it first, then the session ends.
        membership.addListener(event -> {
            metadata.onMembershipEvent(event);
            sessions.onMembershipEvent(event);
        });
        http.serve(metadata); // registers the metrics once, the sessions' included
        LOG.info("registered as {} in cluster {} ({})", membership.incarnation(), membership.cluster().name(),
                membership.cluster().uuid());
        return new DistributedManager(config, local, peer, http, membership, cleanup, metadata, transport, sessions);
    }

    /**
     * Peer services (SES-1): the source end serves {@code orbitkv.inventory.v4.InventorySession} on the peer
     * listener; the requester end runs one session per admitted member (at most {@code --peer-sessions-max},
     * BND-3), applies into {@code metadata.viewReceiver()} (the GlobalIndex, waking await waiters) and opens
     * its channels on the native transport. Await asks it to flush (API-5).
     *
     * @throws SessionBoundsRefused if the session refuses the source's frame bounds (BND-6)
     */
    private static SessionEnds addPeerServices(ManagerConfig config, PeerListener peer, Membership membership,
                                               LocalCache local, ClusterMetadata metadata, NativeTransport transport) {
        SessionConfig sessionConfig = config.sessionConfig();
        InventorySessionServer server;
        try {
            server = InventorySessionServer.create(local.source(), membership.cluster(), membership.incarnation(),
                    membership::view, sessionConfig);
        } catch (IllegalArgumentException e) {
            throw new SessionBoundsRefused(e.getMessage());
        }
        PeerChannels channels = new PeerChannels(transport);
        InventorySubscriber subscriber = InventorySubscriber.create(membership.cluster(), membership.incarnation(),
                config.scope(), metadata.viewReceiver(), channels::open, sessionConfig);
        metadata.attachSessions(new ClusterMetadata.Sessions(subscriber, server, sessionConfig.sessionsPerRequesterMax()));
        peer.addService(server.bindableService());
        return new SessionEnds(server, subscriber, channels);
    }

    /** The session server refused the source's frame bounds (BND-6); a startup refusal, not a crash. */
    private static final class SessionBoundsRefused extends RuntimeException {
        SessionBoundsRefused(String message) {
            super(message, null, false, false);
        }
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
            case RegistrationResult.Unavailable u -> "etcd at " + new EtcdEndpoints(config.etcdEndpoints())
                    + " did not answer the registration: " + u.cause();
            case RegistrationResult.Registered r -> throw new IllegalStateException("registered is not a refusal");
        };
    }

    private static void closeQuietly(HttpApiServer http, PeerListener peer, LocalCache local) {
        if (http != null) {
            http.close();
        }
        try {
            if (peer != null) {
                peer.close();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            local.close();
        } catch (IOException e) {
            LOG.warn("closing the tiers failed: {}", e.toString());
        }
    }

    public InetSocketAddress httpAddress() {
        return http.boundAddress();
    }

    public InetSocketAddress peerAddress() {
        return peer.boundAddress();
    }

    public Membership membership() {
        return membership;
    }

    @Override
    public String readyLine() {
        return ReadyLine.of(httpAddress(), peerAddress(), membership.incarnation(), transport, "distributed");
    }

    @Override
    public boolean shutdown() throws InterruptedException {
        return stop.runOnce(() -> {
            http.stopAdmission();
            boolean drained = http.drain(config.http().shutdownDrainMs());
            if (!drained) {
                LOG.warn("shutdown: requests still running after {} ms; closing", config.http().shutdownDrainMs());
            }
            sessions.close(); // sessions end with SHUTTING_DOWN before the lease goes
            membership.close(); // revokes the lease: the member record goes, peers exclude this incarnation
            LOG.info("deregistered {}", membership.incarnation());
            closeQuietly(http, peer, local);
            indexCleanup.shutdownNow();
            return drained;
        });
    }

    @Override
    public void awaitStopped() throws InterruptedException {
        stop.awaitDone();
    }
}
