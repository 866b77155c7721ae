package orbitkv.server.runtime;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import orbitkv.index.GlobalIndex;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.http.ClusterMetadata;
import orbitkv.server.http.HttpApiServer;
import orbitkv.server.net.NativeTransport;
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
 * registered incarnation and subscribe it to membership (IDX-2, IDX-13); add the peer services; serve HTTP.
 * A local save never waits on any of this (INV-1).
 *
 * <p>Shutdown (SIGTERM): stop HTTP admission, drain, revoke the lease ({@link Membership#close()}: peers
 * exclude this incarnation at once), stop the peer listener, close the tiers.
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
    private final StopSequence stop = new StopSequence();

    private DistributedManager(ManagerConfig config, LocalCache local, PeerListener peer, HttpApiServer http,
                               Membership membership, ThreadPoolExecutor indexCleanup, ClusterMetadata metadata,
                               NativeTransport transport) {
        this.config = config;
        this.local = local;
        this.peer = peer;
        this.http = http;
        this.membership = membership;
        this.indexCleanup = indexCleanup;
        this.metadata = metadata;
        this.transport = transport;
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
        membership.addListener(metadata::onMembershipEvent); // first delivers the current view (IDX-2)
        addPeerServices(peer, metadata);
        http.serve(metadata);
        LOG.info("registered as {} in cluster {} ({})", membership.incarnation(), membership.cluster().name(),
                membership.cluster().uuid());
        return new DistributedManager(config, local, peer, http, membership, cleanup, metadata, transport);
    }

    /**
     * Peer services: the one place where the InventorySession v4 is wired once it exists (SES-1). Its
     * source end is {@code peer.addService(InventorySessionServer.create(source, cluster, self,
     * membership::view, sessionConfig).bindableService())}; its requester end is one
     * {@code InventorySubscriber} fed {@code metadata.viewReceiver()}, opening its channels with
     * {@link orbitkv.server.net.PeerChannels#open} (native transport), subscribed to membership
     * ({@code onMembership(view)}), and wired as {@code metadata.flushThrough(subscriber::flushThrough)}.
     * This build has no session: no service is added, remote owners stay without installed views
     * (coverage PartialHints with other members) and await times out; nothing is faked.
     */
    private static void addPeerServices(PeerListener peer, ClusterMetadata metadata) {
        // Intentionally empty until the InventorySession lands (see above).
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
