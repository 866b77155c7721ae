package orbitkv.conformance.kit;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import orbitkv.conformance.peer.StaticMembership;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.LookupOutcome;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/**
 * The kit's session scenarios' in-process target (issue 34 item 6): one node's inventory objects wired as a Manager
 * wires them, {@link InventorySource} + {@link InventorySessionServer} (on a loopback gRPC listener) +
 * {@link InventorySubscriber} + {@link GlobalIndex}, behind the kit's ports. Its membership is a
 * {@link StaticMembership} that the kit's registrations edit ({@link KitIdentities}); every new view goes to the
 * index, the subscriber and the session server, as the Manager's membership watch does. Fencing (INV-7) fences the
 * server and the subscriber; {@link #suspendMembership()} publishes an invalid view (MEM-9), which a Manager the kit
 * does not own cannot be made to do. Bounds: at most {@value #MEMBERS_MAX} kit nodes and as many subscriber channels,
 * beyond which a registration or a dial is refused by name.
 */
final class InProcessTarget implements TargetStatus, TargetBlocks, KitIdentities, TargetFaults, AutoCloseable {
    static final ClusterIdentity CLUSTER = new ClusterIdentity("adversarial-in-process", new UUID(7, 7));
    /** The source's served-session limit (BND-3; the session_limit row). */
    static final int SOURCE_SESSIONS_MAX = 2;
    /** The source's idle liveness interval (DELTA-13; the idle_liveness row). */
    static final long LIVENESS_MS = 50;
    /** The requester's encoded and decoded frame bounds (SES-10; the oversized rows). */
    static final int FRAME_BYTES_MAX = 64 << 10;
    /** Snapshot page size in records: the 10 kit blocks bootstrap in three pages. */
    static final int PAGE_RECORDS_MAX = 4;
    /** Kit nodes (and subscriber channels) at most. */
    static final int MEMBERS_MAX = KitMembers.MEMBERS_MAX;

    private final Incarnation self = new Incarnation(new NodeId("target"), new NodeEpoch(5), UUID.randomUUID());
    private final String prefix;
    private final Endpoint advertised;
    private final UnaryOperator<MembershipView> serverView;
    private final InventorySource source;
    private final InventorySessionServer server;
    private final Server grpc;
    private final GlobalIndex index;
    private final InventorySubscriber subscriber;
    private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
    private final Map<NodeId, Member> members = new LinkedHashMap<>();
    private final Map<NodeId, Long> epochs = new HashMap<>();
    private long revision = 1;
    private boolean valid = true;
    private volatile StaticMembership view;
    private volatile boolean fenced;

    /**
     * A target whose kit members are named {@code <prefix>-<role>} and advertise {@code advertised} (the kit's
     * listener, or a proxy in front of it); {@code serverView} is what the session server sees of each view (identity,
     * or a broken view for a mutant test).
     */
    InProcessTarget(String prefix, Endpoint advertised, UnaryOperator<MembershipView> serverView) throws IOException {
        this.prefix = prefix;
        this.advertised = advertised;
        this.serverView = serverView;
        members.put(self.nodeId(), StaticMembership.member(self, new Endpoint("127.0.0.1", 1)));
        view = StaticMembership.of(CLUSTER, revision, List.copyOf(members.values()));
        source = InventorySource.create(InventoryConfig.defaults().withPageRecordsMax(PAGE_RECORDS_MAX));
        server = InventorySessionServer.create(source, CLUSTER, self, () -> serverView.apply(view),
                SessionConfig.defaults().withLivenessIntervalMs(LIVENESS_MS).withSessionLimits(128, SOURCE_SESSIONS_MAX));
        grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(server.bindableService()).build().start();
        index = GlobalIndex.create(self, Scope.all(), IndexConfig.defaults(), System::nanoTime, Runnable::run);
        subscriber = InventorySubscriber.create(CLUSTER, self, Scope.all(), index, this::dial,
                SessionConfig.defaults().withBackoffMs(2, 50, 2, 50).withFrameBytesMax(FRAME_BYTES_MAX, FRAME_BYTES_MAX));
        publish();
    }

    /** The target's peer listener (what the kit's requesters dial). */
    Endpoint peer() {
        return new Endpoint("127.0.0.1", grpc.getPort());
    }

    private ManagedChannel dial(Endpoint e) {
        if (channels.size() >= MEMBERS_MAX) {
            throw new IllegalStateException("the in-process target holds " + MEMBERS_MAX + " subscriber channels already");
        }
        ManagedChannel c = NettyChannelBuilder.forAddress(e.host(), e.port()).usePlaintext().build();
        channels.add(c);
        return c;
    }

    /** A new view at the next revision to the index, the subscriber and the session server (index first). */
    private void publish() {
        StaticMembership v;
        synchronized (this) {
            revision++;
            v = new StaticMembership(CLUSTER, revision, valid, members);
            view = v;
        }
        index.onMembership(v);
        subscriber.onMembership(v);
        server.onMembership(serverView.apply(v));
    }

    // ------------------------------------------------------------------ KitIdentities

    @Override
    public Registered register(String role) {
        Incarnation inc;
        synchronized (this) {
            NodeId node = new NodeId(prefix + "-" + role);
            if (!members.containsKey(node) && members.size() > MEMBERS_MAX) {
                throw new IllegalStateException("the in-process target admits " + MEMBERS_MAX + " kit members at most");
            }
            inc = new Incarnation(node, new NodeEpoch(epochs.merge(node, 1L, Long::sum)), UUID.randomUUID());
            members.put(node, new Member(inc, advertised, advertised, ClusterIdentity.PROTOCOL, KitMembers.memberRole(role)));
        }
        publish();
        return new Registered(inc, view.revision());
    }

    @Override
    public void release(Incarnation member) {
        synchronized (this) {
            Member m = members.get(member.nodeId());
            if (m == null || !m.incarnation().equals(member)) {
                return;
            }
            members.remove(member.nodeId());
        }
        publish();
    }

    @Override
    public ClusterIdentity cluster() {
        return CLUSTER;
    }

    // ------------------------------------------------------------------ TargetFaults

    /** INV-7: the target's lease is gone: the server and the subscriber are fenced; this target does not heal. */
    @Override
    public void revoke(Incarnation target) {
        Expect.equal(target, self, "the incarnation the kit fences");
        fenced = true;
        server.fence();
        subscriber.fence();
    }

    @Override
    public boolean suspendMembership() {
        synchronized (this) {
            valid = false;
        }
        publish();
        return true;
    }

    // ------------------------------------------------------------------ TargetStatus

    @Override
    public Incarnation incarnation() {
        return self;
    }

    @Override
    public long headSequence() {
        return source.headSequence();
    }

    @Override
    public long membershipRevision() {
        return view.revision();
    }

    @Override
    public boolean membershipValid() {
        return view.valid() && !fenced;
    }

    @Override
    public String lease() {
        return fenced ? "fenced" : "healthy";
    }

    @Override
    public boolean healEnabled() {
        return false;
    }

    @Override
    public List<ServedSession> served() {
        return server.status().stream().map(s -> new ServedSession(s.sessionId().toString(), s.requester().toString(),
                s.phase().name(), s.cursor(), s.outstandingBytes())).toList();
    }

    @Override
    public Optional<InstalledView> installed(Incarnation owner) {
        return index.installedCursor(owner).map(c -> new InstalledView(c.viewId().toString(), c.watermark()));
    }

    @Override
    public Map<String, String> replicas(Incarnation owner, Namespace ns, List<StateKey> keys) {
        Map<String, String> out = new HashMap<>();
        if (index.lookup(keys) instanceof LookupOutcome.Candidates c) {
            c.keys().forEach(k -> k.replicas().stream().filter(r -> r.owner().equals(owner)).forEach(r -> out.put(
                    HexFormat.of().formatHex(k.key().key()) + "/" + r.medium(), r.sequence() + "/" + r.sizeBytes())));
        }
        return out;
    }

    /** The two counter families the session rows read, from the objects' own metrics (DIAG-3). */
    @Override
    public OptionalDouble counter(String family, Map<String, String> labels) {
        return switch (family) {
            case "orbitkv_session_duplicate_acks_total" -> OptionalDouble.of(server.metrics().duplicateAcks());
            case "orbitkv_session_mismatch_drops_total" -> OptionalDouble.of("requester".equals(labels.get("side"))
                    ? subscriber.metrics().sessionMismatchDrops() : server.metrics().sessionMismatchDrops());
            default -> OptionalDouble.empty();
        };
    }

    // ------------------------------------------------------------------ TargetBlocks

    @Override
    public int save(String namespace, Map<String, byte[]> blocks) {
        int saved = 0;
        for (Map.Entry<String, byte[]> e : blocks.entrySet()) {
            StateKey key = new StateKey(Namespace.utf8(namespace), HexFormat.of().parseHex(e.getKey()));
            saved += source.put(key, Medium.DRAM, e.getValue().length) instanceof MutationResult.Recorded ? 1 : 0;
        }
        return saved;
    }

    @Override
    public void evict(String namespace, List<String> keys) {
        for (String k : keys) {
            source.delete(new StateKey(Namespace.utf8(namespace), HexFormat.of().parseHex(k)), Medium.DRAM);
        }
    }

    @Override
    public void close() throws InterruptedException {
        try {
            subscriber.close();
            server.close();
        } finally {
            channels.forEach(ManagedChannel::shutdownNow);
            grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
