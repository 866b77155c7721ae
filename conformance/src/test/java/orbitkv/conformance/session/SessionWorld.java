package orbitkv.conformance.session;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.StaticMembership;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.index.Replica;
import orbitkv.inventory.InstalledCursor;
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
import orbitkv.testing.Await;

/**
 * Real sources and requesters over real gRPC on loopback (black-box: exported API only), with an
 * in-memory membership view pushed to every node, a {@link FaultProxy} in front of each source, and the
 * oracle comparison of installed views against each source's {@link JournalModel}.
 */
final class SessionWorld implements AutoCloseable {
    static final ClusterIdentity CLUSTER = new ClusterIdentity("session-conformance", new UUID(7, 7));
    static final List<Namespace> NAMESPACES = List.of(Namespace.utf8("ns-a"), Namespace.utf8("ns-b"), Namespace.utf8("ns-c"));

    final SessionConfig sessionConfig;
    final InventoryConfig inventoryConfig;
    private final List<SourceNode> sources = new ArrayList<>();
    private final List<RequesterNode> requesters = new ArrayList<>();
    private volatile MembershipView view = StaticMembership.of(CLUSTER, 1, List.of());
    private long revision = 1;
    /** Every source incarnation ever added (also removed ones), for the oracle of late frames and old views. */
    private final Map<Incarnation, SourceNode> everySource = new java.util.concurrent.ConcurrentHashMap<>();
    /** Set before adding nodes: taps on every source's proxy (wire credit accounting, corruption, reordering). */
    boolean wireTaps;
    /** Set before adding requesters: the oracle is checked at every installed view ({@link OracleReceiver}). */
    boolean oracleAtEveryView;
    /** Set before adding requesters: wraps each requester's receiver (outermost), e.g. to observe applied deltas. */
    java.util.function.UnaryOperator<orbitkv.inventory.ViewReceiver> receiverWrapper = java.util.function.UnaryOperator.identity();
    final java.util.concurrent.atomic.AtomicReference<String> oracleViolation = new java.util.concurrent.atomic.AtomicReference<>();
    final java.util.concurrent.atomic.AtomicLong viewsChecked = new java.util.concurrent.atomic.AtomicLong();

    SessionWorld(SessionConfig sessionConfig, InventoryConfig inventoryConfig) {
        this.sessionConfig = sessionConfig;
        this.inventoryConfig = inventoryConfig;
    }

    static SessionConfig fastConfig() {
        return SessionConfig.defaults().withBackoffMs(2, 50, 2, 50);
    }

    /** A 32-byte block-hash-like key of {@code ns}: {@code i} big-endian in the first 8 bytes, 0x5a last. */
    static StateKey blockKey(Namespace ns, long i) {
        byte[] k = new byte[32];
        for (int b = 0; b < 8; b++) {
            k[b] = (byte) (i >>> (56 - 8 * b));
        }
        k[31] = (byte) 0x5a;
        return new StateKey(ns, k);
    }

    static StateKey key(int ns, int k) {
        return new StateKey(NAMESPACES.get(ns), new byte[] {(byte) (k >>> 8), (byte) k, 0x5a});
    }

    /** One source incarnation: inventory, session server on its own loopback gRPC server, a proxy in front. */
    final class SourceNode implements AutoCloseable {
        final Incarnation incarnation;
        final InventorySource source;
        final InventorySessionServer server;
        final JournalModel model = new JournalModel();
        final Server grpc;
        final FaultProxy proxy;
        final GrpcWireTap tap;

        SourceNode(Incarnation incarnation) throws IOException {
            this.incarnation = incarnation;
            this.source = InventorySource.create(inventoryConfig);
            this.server = InventorySessionServer.create(source, CLUSTER, incarnation, () -> view, sessionConfig);
            this.grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(server.bindableService()).build().start();
            this.tap = wireTaps ? new GrpcWireTap() : null;
            this.proxy = tap == null ? new FaultProxy(new Endpoint("127.0.0.1", grpc.getPort()))
                    : new FaultProxy(new Endpoint("127.0.0.1", grpc.getPort()), tap);
        }

        Endpoint direct() {
            return new Endpoint("127.0.0.1", grpc.getPort());
        }

        long put(StateKey key, Medium medium, long size) {
            synchronized (model) {
                MutationResult r = source.put(key, medium, size);
                long seq = sequenceOf(r);
                model.put(key, medium, size, seq);
                return seq;
            }
        }

        long delete(StateKey key, Medium medium) {
            synchronized (model) {
                MutationResult r = source.delete(key, medium);
                long seq = sequenceOf(r);
                if (seq > 0) {
                    model.delete(key, medium, seq);
                }
                return seq;
            }
        }

        @Override
        public void close() throws Exception {
            server.close();
            proxy.close();
            grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static long sequenceOf(MutationResult r) {
        return r instanceof MutationResult.Recorded rec ? rec.sequence() : 0;
    }

    /** One requester: a real GlobalIndex fed by a real subscriber. */
    final class RequesterNode implements AutoCloseable {
        final Incarnation incarnation;
        final Scope scope;
        final GlobalIndex index;
        final InventorySubscriber subscriber;
        private final List<ManagedChannel> channels = new ArrayList<>();

        RequesterNode(Incarnation incarnation, Scope scope, Map<Endpoint, Endpoint> routes) {
            this.incarnation = incarnation;
            this.scope = scope;
            this.index = GlobalIndex.create(incarnation, scope, IndexConfig.defaults(), System::nanoTime, Runnable::run);
            orbitkv.inventory.ViewReceiver receiver = oracleAtEveryView
                    ? new OracleReceiver(index, this, everySource::get, oracleViolation, viewsChecked) : index;
            receiver = receiverWrapper.apply(receiver);
            this.subscriber = InventorySubscriber.create(CLUSTER, incarnation, scope, receiver, peer -> {
                Endpoint target = routes.getOrDefault(peer, peer);
                ManagedChannel c = NettyChannelBuilder.forAddress(target.host(), target.port()).usePlaintext().build();
                synchronized (channels) {
                    channels.add(c);
                }
                return c;
            }, sessionConfig);
        }

        @Override
        public void close() {
            subscriber.close();
            synchronized (channels) {
                channels.forEach(ManagedChannel::shutdownNow);
            }
        }
    }

    private final Map<Endpoint, Endpoint> routes = new java.util.concurrent.ConcurrentHashMap<>();

    /** Every source incarnation this world ever had, removed ones included. */
    java.util.Collection<SourceNode> everySource() {
        return everySource.values();
    }

    SourceNode addSource(String node, long epoch) throws IOException {
        SourceNode s = new SourceNode(new Incarnation(new NodeId(node), new NodeEpoch(epoch), UUID.randomUUID()));
        routes.put(s.direct(), s.proxy.endpoint());
        sources.add(s);
        everySource.put(s.incarnation, s);
        return s;
    }

    RequesterNode addRequester(String node, Scope scope) {
        return addRequester(node, scope, true);
    }

    /** A requester reaching sources through their fault proxies, or directly. */
    RequesterNode addRequester(String node, Scope scope, boolean viaProxy) {
        RequesterNode r = new RequesterNode(new Incarnation(new NodeId(node), new NodeEpoch(1), UUID.randomUUID()), scope,
                viaProxy ? routes : Map.of());
        requesters.add(r);
        return r;
    }

    /** Closes a requester and adds its next incarnation (same node, next epoch, same scope): a restart. */
    RequesterNode restartRequester(RequesterNode old) {
        requesters.remove(old);
        old.close();
        RequesterNode r = new RequesterNode(new Incarnation(old.incarnation.nodeId(),
                new NodeEpoch(old.incarnation.epoch().value() + 1), UUID.randomUUID()), old.scope, routes);
        requesters.add(r);
        return r;
    }

    /** Publishes a suspended (invalid) view to every node: no remote admission until the next publish (MEM-9). */
    void suspendMembership() {
        MembershipView v = StaticMembership.of(CLUSTER, ++revision, List.of()).suspended();
        view = v;
        for (SourceNode s : sources) {
            s.server.onMembership(v);
        }
        for (RequesterNode r : requesters) {
            r.index.onMembership(v);
            r.subscriber.onMembership(v);
        }
    }

    /** Removes a source from the world (its sessions end when membership no longer lists it). */
    void removeSource(SourceNode s) throws Exception {
        sources.remove(s);
        s.close();
    }

    List<SourceNode> sources() {
        return sources;
    }

    List<RequesterNode> requesters() {
        return requesters;
    }

    /** Publishes a view listing every current source and requester to every node. */
    void publishMembership() {
        List<Member> members = new ArrayList<>();
        for (SourceNode s : sources) {
            members.add(StaticMembership.member(s.incarnation, s.direct()));
        }
        for (RequesterNode r : requesters) {
            members.add(StaticMembership.member(r.incarnation, new Endpoint("127.0.0.1", 1)));
        }
        MembershipView v = StaticMembership.of(CLUSTER, ++revision, members);
        view = v;
        for (SourceNode s : sources) {
            s.server.onMembership(v);
        }
        for (RequesterNode r : requesters) {
            r.index.onMembership(v);
            r.subscriber.onMembership(v);
        }
    }

    MembershipView view() {
        return view;
    }

    /** Waits (bounded) until {@code condition} holds. */
    static void await(String what, Duration bound, BooleanSupplier condition) throws InterruptedException {
        orbitkv.testing.Await.inJvm(what, bound, condition);
    }

    /** The installed cursor of {@code source} at {@code requester}, if any. */
    static Optional<InstalledCursor> cursor(RequesterNode requester, SourceNode source) {
        return requester.index.installedCursor(source.incarnation);
    }

    /** Waits until every requester installed every source through its head, then compares with the oracle. */
    void awaitConvergedAndCompare(Duration bound, Supplier<String> context) throws InterruptedException {
        for (RequesterNode r : requesters) {
            for (SourceNode s : sources) {
                long head = s.source.headSequence();
                try {
                    await("requester " + r.incarnation.nodeId() + " installs " + s.incarnation.nodeId() + " through " + head
                            + " (" + context.get() + ")", bound,
                            () -> cursor(r, s).map(c -> c.watermark() == head).orElse(false));
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "; cursor " + cursor(r, s) + ", requester " + r.subscriber.status()
                            + ", source sessions " + s.server.status() + ", journal " + s.source.status(), e);
                }
                compare(r, s, context);
            }
        }
    }

    /** The installed view equals the source's resident map filtered by scope at the view watermark. */
    void compare(RequesterNode r, SourceNode s, Supplier<String> context) {
        long w = cursor(r, s).orElseThrow().watermark();
        Map<JournalModel.Residence, JournalModel.Generation> expected = s.model.stateAt(w, r.scope);
        Map<JournalModel.Residence, JournalModel.Generation> actual = installed(r, s);
        if (!expected.equals(actual)) {
            throw new AssertionError("view of " + s.incarnation.nodeId() + " at " + r.incarnation.nodeId() + " @" + w
                    + " differs from the oracle (" + context.get() + "): expected " + expected.size() + " rows, got "
                    + actual.size() + "; missing/extra " + diff(expected, actual));
        }
    }

    private static String diff(Map<JournalModel.Residence, JournalModel.Generation> e,
            Map<JournalModel.Residence, JournalModel.Generation> a) {
        Map<Object, Object> d = new HashMap<>();
        e.forEach((k, v) -> {
            if (!v.equals(a.get(k))) {
                d.put(k, v + " vs " + a.get(k));
            }
        });
        a.forEach((k, v) -> {
            if (!e.containsKey(k)) {
                d.put(k, "unexpected " + v);
            }
        });
        return d.entrySet().stream().limit(5).toList().toString();
    }

    static int keysPerNamespace = 64;

    /** The installed rows of {@code s} at {@code r}, read through lookup over the whole key universe. */
    static Map<JournalModel.Residence, JournalModel.Generation> installed(RequesterNode r, SourceNode s) {
        return installed(r, s, false);
    }

    /**
     * As {@link #installed(RequesterNode, SourceNode)}, or null when {@code nullIfSuspended} and any lookup batch
     * answered Unavailable: while membership is suspended a requester lists no remote rows (MEM-9), so its
     * installed view cannot be read through lookups at that moment.
     */
    static Map<JournalModel.Residence, JournalModel.Generation> installed(RequesterNode r, SourceNode s, boolean nullIfSuspended) {
        Map<JournalModel.Residence, JournalModel.Generation> out = new HashMap<>();
        List<StateKey> all = new ArrayList<>();
        for (int ns = 0; ns < NAMESPACES.size(); ns++) {
            if (!r.scope.contains(NAMESPACES.get(ns))) {
                continue;
            }
            for (int k = 0; k < keysPerNamespace; k++) {
                all.add(key(ns, k));
            }
        }
        for (int i = 0; i < all.size(); i += 128) {
            LookupOutcome o = r.index.lookup(all.subList(i, Math.min(all.size(), i + 128)));
            if (!(o instanceof LookupOutcome.Candidates c)) {
                throw new AssertionError("lookup refused: " + o);
            }
            if (nullIfSuspended && c.coverage() == orbitkv.index.Coverage.Unavailable) {
                return null;
            }
            for (KeyCandidates kc : c.keys()) {
                for (Replica rep : kc.replicas()) {
                    if (rep.owner().equals(s.incarnation)) {
                        out.put(new JournalModel.Residence(kc.key(), rep.medium()),
                                new JournalModel.Generation(rep.sequence(), rep.sizeBytes()));
                    }
                }
            }
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        for (RequesterNode r : requesters) {
            r.close();
        }
        for (SourceNode s : sources) {
            s.close();
        }
    }
}
