package orbitkv.conformance.session;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import orbitkv.conformance.peer.AdversarialRequester;
import orbitkv.conformance.peer.AdversarialSource;
import orbitkv.conformance.peer.Conversation;
import orbitkv.conformance.peer.StaticMembership;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.InventorySubscriber;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.SourceSessionStatus;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.NeedRepair;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ResumePoint;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs {@code tables/session/adversarial.table}: the adversarial v4 peer sends crafted traffic to the
 * implementation under test; each row asserts the named outcome and that no state changed.
 */
@Tag("gate")
class AdversarialTableTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    /** An idle observation window: 30 ACK intervals of 10 ms. */
    static final Duration IDLE_WINDOW = Duration.ofMillis(300);
    private static final ClusterIdentity CLUSTER = SessionWorld.CLUSTER;
    private static final Namespace NS = Namespace.utf8("ns-a");

    record Row(String side, String scenario, String expected, String rules) {}

    static List<Row> rows() throws IOException {
        Path p = Path.of(System.getProperty("orbitkv.root", ".."), "conformance/src/test/resources/tables/session/adversarial.table");
        List<Row> rows = new ArrayList<>();
        for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
            String body = line.strip();
            if (body.isEmpty() || body.startsWith("#")) {
                continue;
            }
            int hash = body.indexOf('#');
            String rules = hash < 0 ? "" : body.substring(hash + 1).strip();
            String[] cells = (hash < 0 ? body : body.substring(0, hash)).split("\\|");
            rows.add(new Row(cells[0].strip(), cells[1].strip(), cells[2].strip(), rules));
        }
        return rows;
    }

    @TestFactory
    Stream<DynamicTest> table() throws IOException {
        return rows().stream().map(r -> DynamicTest.dynamicTest(r.rules().split("  ")[0] + " " + r.side() + "/" + r.scenario()
                + " -> " + r.expected(), () -> {
                    String outcome = r.side().equals("source") ? new SourceUnderTest().run(r.scenario())
                            : new RequesterUnderTest().run(r.scenario());
                    assertThat(outcome).as(r.side() + "/" + r.scenario() + "  # " + r.rules()).isEqualTo(r.expected());
                }));
    }

    static Incarnation inc(String node, long epoch) {
        return new Incarnation(new NodeId(node), new NodeEpoch(epoch), UUID.randomUUID());
    }

    static StateKey key(int i) {
        return new StateKey(NS, new byte[] {(byte) (i >>> 8), (byte) i});
    }

    /** What the requester or source under test answered, as a table outcome. */
    static String errorOutcome(Conversation.Received<?> r) {
        return r == null ? "nothing" : r.toString();
    }

    // =============================================================== the source under test

    static final class SourceUnderTest {
        final Incarnation self = inc("src", 5);
        final Incarnation r1 = inc("req-1", 1);
        final Incarnation r2 = inc("req-2", 1);
        final Incarnation r3 = inc("req-3", 1);
        final Scope scope = Scope.of(List.of(NS));
        final AtomicReference<MembershipView> view = new AtomicReference<>();
        InventorySource source;
        InventorySessionServer server;
        Server grpc;
        AdversarialRequester peer;

        String run(String scenario) throws Exception {
            source = InventorySource.create(InventoryConfig.defaults().withPageRecordsMax(4));
            for (int i = 0; i < 10; i++) {
                source.put(key(i), Medium.DRAM, 100 + i);
            }
            view.set(StaticMembership.of(CLUSTER, 3, List.of(member(self), member(r1), member(r2), member(r3))));
            server = InventorySessionServer.create(source, CLUSTER, self, view::get,
                    SessionConfig.defaults().withLivenessIntervalMs(50).withSessionLimits(128, 2));
            grpc = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(server.bindableService())
                    .build().start();
            peer = AdversarialRequester.connect(new Endpoint("127.0.0.1", grpc.getPort()));
            long head = source.headSequence();
            try {
                String outcome = scenario(scenario);
                assertThat(source.headSequence()).as("source head unchanged").isEqualTo(head);
                return outcome;
            } finally {
                server.close();
                peer.close();
                grpc.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
        }

        static orbitkv.membership.Member member(Incarnation i) {
            return StaticMembership.member(i, new Endpoint("127.0.0.1", 1));
        }

        RequesterFrame openFrame(UUID sid, Open.Builder open) {
            return RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setOpen(open).build();
        }

        Open.Builder validOpen(Incarnation requester, UUID sid) {
            return WireFrames.open(CLUSTER, self, requester, scope, sid);
        }

        String scenario(String name) throws Exception {
            UUID sid = UUID.randomUUID();
            Open.Builder open = validOpen(r1, sid);
            AdversarialRequester.Session s = peer.open();
            switch (name) {
                case "wrong_protocol" -> open.setProtocol("orbitkv/inventory-stream/v3");
                case "wrong_cluster" -> open.setClusterUuid(WireFrames.uuid(UUID.randomUUID()));
                case "stale_source_epoch" -> open.setSource(WireFrames.ref(new Incarnation(self.nodeId(), new NodeEpoch(4), self.id())));
                case "unknown_source" -> open.setSource(WireFrames.ref(inc("someone-else", 1)));
                case "unknown_requester" -> open.setRequester(WireFrames.ref(inc("req-9", 1)));
                case "suspended_membership" -> view.set(((StaticMembership) view.get()).suspended());
                case "fenced_source" -> server.fence();
                case "scope_digest_mismatch" -> open.setScopeDigest(ByteString.copyFrom(Scope.all().digest().bytes()));
                case "scope_257_namespaces" -> {
                    var list = orbitkv.inventory.wire.NamespaceList.newBuilder();
                    for (int i = 0; i < 257; i++) {
                        list.addNamespaces(ByteString.copyFromUtf8("n" + i));
                    }
                    open.setScope(ScopeSpec.newBuilder().setList(list));
                }
                case "scope_empty_namespace" -> open.setScope(ScopeSpec.newBuilder().setList(
                        orbitkv.inventory.wire.NamespaceList.newBuilder().addNamespaces(ByteString.EMPTY)));
                case "scope_missing" -> open.clearScope();
                case "open_over_64k" -> {
                    var list = orbitkv.inventory.wire.NamespaceList.newBuilder();
                    for (int i = 0; i < 256; i++) {
                        list.addNamespaces(ByteString.copyFrom(new byte[255]).concat(ByteString.copyFromUtf8("")));
                    }
                    open.setScope(ScopeSpec.newBuilder().setList(list));
                    assertThat(openFrame(sid, open).getSerializedSize()).isGreaterThan(64 << 10);
                }
                case "garbage_bytes" -> {
                    s.sendBytes(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01, 0x02});
                    return awaitError(s);
                }
                case "window_overflow" -> open.setReceiveWindowBytes(-1L);
                case "epoch_overflow" -> open.setRequester(WireFrames.ref(r1).toBuilder().setNodeEpoch(-1L));
                case "digest_short" -> open.setScopeDigest(ByteString.copyFrom(new byte[31]));
                case "open_session_mismatch" -> open.setSessionId(WireFrames.uuid(UUID.randomUUID()));
                case "first_frame_not_open" -> {
                    s.send(RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setAck(Ack.newBuilder()
                            .setConsumedThroughFrame(1)).build());
                    return awaitError(s);
                }
                case "resume_unknown_view" -> {
                    open.setResume(ResumePoint.newBuilder().setViewId(WireFrames.uuid(UUID.randomUUID())).setAppliedCursor(3));
                    s.send(openFrame(sid, open));
                    SourceFrame f = s.nextFrame(WAIT);
                    return "accepted:" + f.getAccepted().getMode().name();
                }
                default -> {
                    return afterOpen(name, s, sid, open);
                }
            }
            s.send(openFrame(sid, open));
            String outcome = awaitError(s);
            assertThat(server.status()).as("a refused Open leaves no session").isEmpty();
            return outcome;
        }

        /** Scenarios after a valid Open: the peer reads the whole bootstrap first. */
        String afterOpen(String name, AdversarialRequester.Session s, UUID sid, Open.Builder open) throws Exception {
            s.send(openFrame(sid, open));
            Bootstrap b = readBootstrap(s);
            RequesterFrame.Builder f = RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid));
            switch (name) {
                case "second_open" -> {
                    s.send(openFrame(sid, open));
                    return awaitError(s);
                }
                case "future_ack" -> {
                    s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame + 5)).build());
                    String outcome = awaitError(s);
                    assertThat(server.status()).isEmpty();
                    return outcome;
                }
                case "duplicate_ack" -> {
                    s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
                    SessionWorld.await("credit returned", WAIT, () -> only().creditReturnedBytes() > 0);
                    long returned = only().creditReturnedBytes();
                    assertThat(only().outstandingBytes()).isZero();
                    s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
                    SessionWorld.await("duplicate counted", WAIT, () -> only().duplicateAcks() == 1);
                    assertThat(only().creditReturnedBytes()).as("a duplicate ACK never enlarges the window").isEqualTo(returned);
                    return "duplicate";
                }
                case "foreign_session_frame" -> {
                    long outstanding = only().outstandingBytes();
                    s.send(RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(UUID.randomUUID()))
                            .setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
                    SessionWorld.await("drop counted", WAIT, () -> only().sessionMismatchDrops() == 1);
                    assertThat(only().outstandingBytes()).isEqualTo(outstanding);
                    assertThat(only().creditReturnedBytes()).isZero();
                    return "dropped";
                }
                case "replaced_session" -> {
                    UUID sid2 = UUID.randomUUID();
                    AdversarialRequester.Session s2 = peer.open();
                    s2.send(openFrame(sid2, validOpen(r1, sid2)));
                    readBootstrap(s2);
                    String old = awaitError(s);
                    s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
                    SourceSessionStatus now = only();
                    assertThat(now.sessionId()).isEqualTo(sid2);
                    assertThat(now.creditReturnedBytes()).as("the old session's ACK never touches the new one").isZero();
                    assertThat(now.sessionMismatchDrops()).isZero();
                    return old;
                }
                case "session_limit" -> {
                    UUID sid2 = UUID.randomUUID();
                    AdversarialRequester.Session s2 = peer.open();
                    s2.send(openFrame(sid2, validOpen(r2, sid2)));
                    readBootstrap(s2);
                    UUID sid3 = UUID.randomUUID();
                    AdversarialRequester.Session s3 = peer.open();
                    s3.send(openFrame(sid3, validOpen(r3, sid3)));
                    String outcome = awaitError(s3);
                    assertThat(server.status()).hasSize(2);
                    return outcome;
                }
                case "regenerate_above_sent" -> {
                    s.send(f.setNeedRepair(NeedRepair.newBuilder().setViewId(WireFrames.uuid(b.viewId))
                            .setAppliedCursor(b.s1 + 5)).build());
                    return awaitError(s);
                }
                case "idle_liveness" -> {
                    s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
                    SourceFrame next = s.nextFrame(WAIT);
                    assertThat(next.getBodyCase()).isEqualTo(SourceFrame.BodyCase.LIVENESS);
                    assertThat(next.getFrameNumber()).isEqualTo(b.lastFrame + 1);
                    assertThat(next.getLiveness().getSourceHead()).isEqualTo(source.headSequence());
                    assertThat(only().cursor()).as("liveness never moves the cursor").isEqualTo(b.s1);
                    return "liveness";
                }
                default -> throw new IllegalArgumentException("unknown source scenario " + name);
            }
        }

        SourceSessionStatus only() {
            List<SourceSessionStatus> st = server.status();
            assertThat(st).hasSize(1);
            return st.getFirst();
        }

        record Bootstrap(UUID viewId, long s1, long lastFrame) {}

        /** Reads OpenAccepted, SnapshotBegin, pages and replay through SnapshotCommit, checking numbering. */
        Bootstrap readBootstrap(AdversarialRequester.Session s) throws InterruptedException {
            long expect = 1;
            while (true) {
                SourceFrame f = s.nextFrame(WAIT);
                assertThat(f.getFrameNumber()).as("SES-12 frame numbering").isEqualTo(expect++);
                if (f.hasError()) {
                    throw new AssertionError("unexpected error " + f.getError());
                }
                if (f.hasSnapshotCommit()) {
                    return new Bootstrap(WireFrames.uuid(f.getSnapshotCommit().getViewId()), f.getSnapshotCommit().getS1(),
                            f.getFrameNumber());
                }
            }
        }

        static String awaitError(AdversarialRequester.Session s) throws InterruptedException {
            while (true) {
                Conversation.Received<SourceFrame> r = s.next(WAIT);
                if (r instanceof Conversation.Received.Frame<SourceFrame> f && f.frame().hasError()) {
                    return "error:" + f.frame().getError().getCause().name();
                }
                if (!(r instanceof Conversation.Received.Frame<SourceFrame>)) {
                    return errorOutcome(r);
                }
            }
        }
    }

    // =============================================================== the requester under test

    static final class RequesterUnderTest {
        final Incarnation source = inc("peer-src", 3);
        final Incarnation self = inc("req", 1);
        final Scope scope = Scope.all();
        AdversarialSource peer;
        GlobalIndex index;
        InventorySubscriber subscriber;
        final List<ManagedChannel> channels = new ArrayList<>();
        UUID sid;
        UUID viewId = UUID.randomUUID();
        long n;
        AdversarialSource.ScriptedSession ss;
        final List<ResidenceRecord> rows = List.of(ResidenceRecord.put(key(1), Medium.DRAM, 1, 10),
                ResidenceRecord.put(key(2), Medium.DRAM, 2, 20), ResidenceRecord.put(key(3), Medium.SSD, 3, 30));

        String run(String scenario) throws Exception {
            peer = AdversarialSource.start();
            index = GlobalIndex.create(self, scope, IndexConfig.defaults(), System::nanoTime, Runnable::run);
            subscriber = InventorySubscriber.create(CLUSTER, self, scope, index, e -> {
                ManagedChannel c = NettyChannelBuilder.forAddress(e.host(), e.port()).usePlaintext().build();
                channels.add(c);
                return c;
            }, SessionWorld.fastConfig().withFrameBytesMax(64 << 10, 64 << 10));
            MembershipView v = StaticMembership.of(CLUSTER, 2, List.of(StaticMembership.member(source, peer.endpoint()),
                    StaticMembership.member(self, new Endpoint("127.0.0.1", 1))));
            index.onMembership(v);
            subscriber.onMembership(v);
            try {
                installPreamble();
                Map<JournalModel.Residence, JournalModel.Generation> before = rowsNow();
                String outcome = scenario(scenario);
                assertThat(index.installedCursor(source)).as("installed view unchanged")
                        .contains(new InstalledCursor(viewId, 3));
                assertThat(rowsNow()).as("installed rows unchanged").isEqualTo(before);
                return outcome;
            } finally {
                subscriber.close();
                channels.forEach(ManagedChannel::shutdownNow);
                peer.close();
            }
        }

        Map<JournalModel.Residence, JournalModel.Generation> rowsNow() {
            Map<JournalModel.Residence, JournalModel.Generation> out = new java.util.HashMap<>();
            var o = (orbitkv.index.LookupOutcome.Candidates) index.lookup(List.of(key(1), key(2), key(3), key(4), key(5)));
            o.keys().forEach(k -> k.replicas().forEach(rep -> out.put(new JournalModel.Residence(k.key(), rep.medium()),
                    new JournalModel.Generation(rep.sequence(), rep.sizeBytes()))));
            return out;
        }

        SourceFrame.Builder frame() {
            return SourceFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setFrameNumber(n++);
        }

        void accept(RequesterFrame open, OpenMode mode) {
            sid = WireFrames.uuid(open.getOpen().getSessionId());
            n = 1;
            ss.send(frame().setAccepted(OpenAccepted.newBuilder().setMode(mode).setWindowBytes(8 << 20)).build());
        }

        /** A real bootstrap from the peer: view V installed at 3 with three rows. */
        void installPreamble() throws Exception {
            ss = peer.nextSession(WAIT);
            RequesterFrame open = ss.nextFrame(WAIT);
            assertThat(open.hasOpen()).isTrue();
            assertThat(open.getOpen().hasResume()).isFalse();
            accept(open, OpenMode.OPEN_MODE_BOOTSTRAP);
            TranscriptDigest digest = TranscriptDigest.builder().begin(2, viewId, scope.digest(), 3).page(3, 1, rows).finish();
            ss.send(frame().setSnapshotBegin(WireFrames.begin(viewId, 3, scope.digest())).build());
            ss.send(frame().setSnapshotPage(WireFrames.page(viewId, 1, rows)).build());
            ss.send(frame().setSnapshotCommit(WireFrames.commit(viewId, 3, 1, 2, 3, 3, digest)).build());
            try {
                SessionWorld.await("preamble installed", WAIT,
                        () -> index.installedCursor(source).map(c -> c.watermark() == 3).orElse(false));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; requester answered " + ss.next(Duration.ofMillis(100))
                        + " status " + subscriber.status(), e);
            }
        }

        String scenario(String name) throws Exception {
            switch (name) {
                case "duplicate_frame_number" -> {
                    n--;
                    ss.send(frame().setLiveness(Liveness.newBuilder().setSourceHead(3)).build());
                }
                case "frame_number_gap" -> {
                    n++;
                    ss.send(frame().setLiveness(Liveness.newBuilder().setSourceHead(3)).build());
                }
                case "overlapping_delta" -> ss.send(frame().setDelta(WireFrames.delta(2, 5, List.of(
                        ResidenceRecord.put(key(4), Medium.DRAM, 4, 1), ResidenceRecord.put(key(5), Medium.DRAM, 5, 1)))).build());
                case "delta_gap" -> ss.send(frame().setDelta(WireFrames.delta(4, 6, List.of(
                        ResidenceRecord.put(key(4), Medium.DRAM, 5, 1)))).build());
                case "duplicate_delta" -> {
                    long frameNo = n;
                    ss.send(frame().setDelta(WireFrames.delta(1, 3, List.of(ResidenceRecord.put(key(3), Medium.SSD, 3, 30)))).build());
                    return awaitAck(frameNo);
                }
                case "oversized_encoded" -> {
                    List<ResidenceRecord> big = new ArrayList<>();
                    for (int i = 0; i < 1500; i++) {
                        big.add(ResidenceRecord.put(new StateKey(NS, new byte[40]), Medium.DRAM, 4, 1));
                    }
                    Delta d = WireFrames.delta(3, 4, big);
                    assertThat(d.getSerializedSize()).isGreaterThan(64 << 10);
                    ss.send(frame().setDelta(d).build());
                }
                case "oversized_decoded" -> {
                    List<ResidenceRecord> many = new ArrayList<>();
                    for (int i = 0; i < 1800; i++) {
                        many.add(ResidenceRecord.put(key(100 + i), Medium.DRAM, 4 + i, 1));
                    }
                    Delta d = WireFrames.delta(3, 4 + 1800, many);
                    assertThat(d.getSerializedSize()).isLessThan(60 << 10);
                    ss.send(frame().setDelta(d).build());
                }
                case "unknown_enum_medium" -> ss.send(frame().setDelta(Delta.newBuilder().setFrom(3).setTo(4)
                        .addNamespaces(ByteString.copyFrom(NS.bytes())).addRecords(Record.newBuilder().setNamespaceIndex(0)
                                .setKey(ByteString.copyFromUtf8("k")).setMediumValue(9).setOp(RecordOp.RECORD_OP_PUT)
                                .setSequence(4).setSizeBytes(1))).build());
                case "key_too_long" -> ss.send(frame().setDelta(Delta.newBuilder().setFrom(3).setTo(4)
                        .addNamespaces(ByteString.copyFrom(NS.bytes())).addRecords(Record.newBuilder().setNamespaceIndex(0)
                                .setKey(ByteString.copyFrom(new byte[65])).setMedium(orbitkv.inventory.wire.Medium.MEDIUM_DRAM)
                                .setOp(RecordOp.RECORD_OP_PUT).setSequence(4).setSizeBytes(1))).build());
                case "record_outside_interval" -> ss.send(frame().setDelta(WireFrames.delta(3, 4, List.of(
                        ResidenceRecord.put(key(4), Medium.DRAM, 7, 1)))).build());
                case "sequence_overflow" -> ss.send(frame().setDelta(Delta.newBuilder().setFrom(3).setTo(-1L)).build());
                case "foreign_session_frame" -> {
                    ss.send(SourceFrame.newBuilder().setSessionId(WireFrames.uuid(UUID.randomUUID())).setFrameNumber(n)
                            .setDelta(WireFrames.delta(3, 4, List.of(ResidenceRecord.put(key(4), Medium.DRAM, 4, 1)))).build());
                    long frameNo = n;
                    ss.send(frame().setDelta(WireFrames.delta(1, 3, List.of())).build());
                    awaitAck(frameNo);
                    return "dropped";
                }
                case "replaced_session_frame" -> {
                    UUID oldSid = sid;
                    ss.complete();
                    ss = peer.nextSession(WAIT);
                    RequesterFrame open = ss.nextFrame(WAIT);
                    assertThat(open.getOpen().getResume().getAppliedCursor()).as("SNAP-8 resume from the installed view").isEqualTo(3);
                    assertThat(WireFrames.uuid(open.getOpen().getSessionId())).isNotEqualTo(oldSid);
                    accept(open, OpenMode.OPEN_MODE_RESUMED);
                    ss.send(SourceFrame.newBuilder().setSessionId(WireFrames.uuid(oldSid)).setFrameNumber(n)
                            .setDelta(WireFrames.delta(3, 4, List.of(ResidenceRecord.put(key(4), Medium.DRAM, 4, 1)))).build());
                    long frameNo = n;
                    ss.send(frame().setDelta(WireFrames.delta(1, 3, List.of())).build());
                    awaitAck(frameNo);
                    return "dropped";
                }
                case "commit_without_pages" -> {
                    UUID v2 = UUID.randomUUID();
                    long begin = n;
                    ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scope.digest())).build());
                    TranscriptDigest d = TranscriptDigest.builder().begin(begin, v2, scope.digest(), 3).finish();
                    ss.send(frame().setSnapshotCommit(WireFrames.commit(v2, 3, 2, begin, begin, 0, d)).build());
                }
                case "digest_mismatch" -> {
                    UUID v2 = UUID.randomUUID();
                    long begin = n;
                    ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scope.digest())).build());
                    ss.send(frame().setSnapshotPage(WireFrames.page(v2, 1, rows)).build());
                    byte[] wrong = TranscriptDigest.builder().begin(begin, v2, scope.digest(), 3).finish().bytes();
                    ss.send(frame().setSnapshotCommit(WireFrames.commit(v2, 3, 1, begin, begin + 1, 3,
                            new TranscriptDigest(wrong))).build());
                }
                case "scope_digest_short" -> ss.send(frame().setSnapshotBegin(WireFrames.begin(UUID.randomUUID(), 3, scope.digest())
                        .toBuilder().setScopeDigest(ByteString.copyFrom(new byte[31]))).build());
                case "page_after_replay" -> {
                    UUID v2 = UUID.randomUUID();
                    ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scope.digest())).build());
                    ss.send(frame().setDelta(WireFrames.delta(3, 4, List.of(ResidenceRecord.put(key(4), Medium.DRAM, 4, 1)))).build());
                    ss.send(frame().setSnapshotPage(WireFrames.page(v2, 1, rows)).build());
                }
                case "staged_page_credit" -> {
                    UUID v2 = UUID.randomUUID();
                    ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scope.digest())).build());
                    long page = n;
                    ss.send(frame().setSnapshotPage(WireFrames.page(v2, 1, rows)).build());
                    return awaitStagedAck(page, v2);
                }
                case "idle_ack_silence" -> {
                    return awaitSilence(n - 1);
                }
                case "requester_fenced" -> subscriber.fence();
                case "source_left_membership" -> {
                    Incarnation newer = new Incarnation(source.nodeId(), new NodeEpoch(4), UUID.randomUUID());
                    subscriber.onMembership(StaticMembership.of(CLUSTER, 3, List.of(StaticMembership.member(newer, peer.endpoint()),
                            StaticMembership.member(self, new Endpoint("127.0.0.1", 1)))));
                }
                default -> throw new IllegalArgumentException("unknown requester scenario " + name);
            }
            return awaitAnswer();
        }

        /** The requester's next meaningful answer: an Error, a ResumeFrom or a NeedRepair (ACKs skipped). */
        String awaitAnswer() throws InterruptedException {
            while (true) {
                Conversation.Received<RequesterFrame> r = ss.next(WAIT);
                if (!(r instanceof Conversation.Received.Frame<RequesterFrame> f)) {
                    return errorOutcome(r);
                }
                RequesterFrame rf = f.frame();
                switch (rf.getBodyCase()) {
                    case ERROR -> {
                        return "error:" + rf.getError().getCause().name();
                    }
                    case RESUME_FROM -> {
                        return "resume_from:" + rf.getResumeFrom().getAppliedCursor();
                    }
                    case NEED_REPAIR -> {
                        return "need_repair:" + rf.getNeedRepair().getAppliedCursor();
                    }
                    default -> {
                        // ACKs: keep reading
                    }
                }
            }
        }

        /**
         * SES-14: the ACK covering a staged page returns its credit while the installed view stays put: it names
         * the staging view and the installed watermark 3, and the index still has view V installed at 3.
         */
        String awaitStagedAck(long pageFrame, UUID staging) throws InterruptedException {
            while (true) {
                RequesterFrame rf = ss.nextFrame(WAIT);
                assertThat(rf.hasAck()).as("only ACKs while staging, got " + rf.getBodyCase()).isTrue();
                if (rf.getAck().getConsumedThroughFrame() >= pageFrame) {
                    assertThat(WireFrames.uuid(rf.getAck().getViewId())).as("the ACK names the staging view").isEqualTo(staging);
                    assertThat(rf.getAck().getAppliedCursor()).as("the installed watermark stays put").isEqualTo(3);
                    assertThat(index.installedCursor(source)).contains(new InstalledCursor(viewId, 3));
                    return "ack";
                }
            }
        }

        /**
         * DELTA-12: once everything sent is acknowledged, an idle session sends nothing: no empty ACK loop
         * within {@link #IDLE_WINDOW} (many ACK intervals).
         */
        String awaitSilence(long lastFrame) throws InterruptedException {
            while (true) {
                RequesterFrame rf = ss.nextFrame(WAIT);
                assertThat(rf.hasAck()).as("only ACKs, got " + rf.getBodyCase()).isTrue();
                if (rf.getAck().getConsumedThroughFrame() >= lastFrame) {
                    break;
                }
            }
            Conversation.Received<RequesterFrame> extra = ss.next(IDLE_WINDOW);
            return extra == null ? "silent" : "sent while idle: " + extra;
        }

        /** Waits for an ACK covering {@code frameNo} with no Error or regeneration request before it. */
        String awaitAck(long frameNo) throws InterruptedException {
            while (true) {
                RequesterFrame rf = ss.nextFrame(WAIT);
                if (rf.hasAck() && rf.getAck().getConsumedThroughFrame() >= frameNo) {
                    assertThat(rf.getAck().getAppliedCursor()).isEqualTo(3);
                    return "ack";
                }
                assertThat(rf.hasAck()).as("only ACKs before the covering ACK, got " + rf.getBodyCase()).isTrue();
            }
        }
    }
}
