package orbitkv.conformance.kit;

import com.google.protobuf.ByteString;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.UUID;
import orbitkv.conformance.peer.AdversarialRequester;
import orbitkv.conformance.peer.Conversation;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.wire.Ack;
import orbitkv.inventory.wire.NeedRepair;
import orbitkv.inventory.wire.Open;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.ResumePoint;
import orbitkv.inventory.wire.ScopeSpec;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;

/**
 * The {@code source} rows against the target's source end: the kit is a requester (three registered kit
 * members) speaking the wire to the target's peer listener. State is observed only through the wire and the
 * target's ports (issue 34 item 6): {@link TargetStatus} (for a Manager API v1: the head through
 * {@code status.inventory.head_sequence}, sessions and credit through {@code status.sessions.served[]},
 * counters through {@code /metrics}), {@link KitIdentities} and {@link TargetFaults}, so the same rows run
 * black-box against a Manager and in-process ({@code AdversarialTableTest}). Before the first row the kit saves
 * 10 blocks into its own namespace on the target, so every kit session bootstraps exactly those rows.
 */
final class SourceScenarios {
    static final int BLOCKS = 10;

    private final ScenarioProfile profile;
    private final TargetStatus status;
    private final TargetBlocks blocks;
    private final KitIdentities members;
    private ClusterIdentity cluster;
    private final Incarnation target;
    private final String namespace;
    private final Scope scope;
    private final List<Incarnation> requesters = new ArrayList<>();
    private final Duration wait;
    private volatile KitChannels peer;
    private volatile RowDeadline deadline;
    private volatile RowLog seen;

    private final java.util.Optional<TargetFaults> fence;

    SourceScenarios(ScenarioProfile profile, TargetStatus status, TargetBlocks blocks, KitIdentities members, Incarnation target,
            String namespace, java.util.Optional<TargetFaults> fence) {
        this.fence = fence;
        this.profile = profile;
        this.status = status;
        this.blocks = blocks;
        this.members = members;
        this.target = target;
        this.namespace = namespace;
        this.scope = Scope.of(List.of(Namespace.utf8(namespace)));
        this.wait = profile.answerBound();
    }

    /** Registers the kit's requesters and saves the kit's blocks; returns once the target admits them. */
    void setUp() throws InterruptedException {
        ensureRequesters(3);
        cluster = members.cluster();
        Map<String, byte[]> saving = new LinkedHashMap<>();
        for (int i = 0; i < BLOCKS; i++) {
            saving.put(keyHex(i), TargetApi.payload(1, i, 64));
        }
        Expect.equal(blocks.save(namespace, saving), BLOCKS, "blocks saved on the target");
    }

    /** Removes the kit's blocks from the target (the journal keeps their history, as any eviction does). */
    void tearDown() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < BLOCKS; i++) {
            keys.add(keyHex(i));
        }
        blocks.evict(namespace, keys);
    }

    static String keyHex(int i) {
        return String.format("%04x", i);
    }

    /** Registers kit requesters until {@code n} exist, then waits until the target's view includes them. */
    private void ensureRequesters(int n) throws InterruptedException {
        long revision = 0;
        while (requesters.size() < n) {
            KitIdentities.Registered m = members.register("req-" + (requesters.size() + 1));
            requesters.add(m.incarnation());
            revision = Math.max(revision, m.revision());
        }
        long atLeast = revision;
        Expect.within(wait.multipliedBy(2), "the target's membership revision reaches " + atLeast + " (the kit's requesters)",
                () -> status.membershipRevision() >= atLeast);
    }

    /** Runs one row within {@code deadline}, noting what the target sends in {@code seen}; returns the outcome token. */
    String run(ScenarioRow row, RowDeadline deadline, RowLog seen) throws Exception {
        this.deadline = deadline;
        this.seen = seen;
        long head = head();
        peer = new KitChannels(profile.targetPeer(), profile.peerTls());
        try {
            String outcome = scenario(row.scenario());
            if (!row.scenario().equals("fenced_source")) { // a fenced target heals with a new journal (INV-7)
                Expect.equal(head(), head, "the target's head_sequence (no state changed)");
            }
            return outcome;
        } finally {
            peer.close();
        }
    }

    /** The row's deadline passed: ends its channel, so every stream and wait of the row returns. */
    void cancel() {
        KitChannels p = peer;
        if (p != null) {
            try {
                p.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private long head() {
        return status.headSequence();
    }

    /** Kit requester member {@code i} (1..3 after {@link #setUp}); the transfer rows speak as them too. */
    Incarnation requester(int i) {
        return r(i);
    }

    private Incarnation r(int i) {
        return requesters.get(i - 1);
    }

    RequesterFrame openFrame(UUID sid, Open.Builder open) {
        return RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setOpen(open).build();
    }

    Open.Builder validOpen(Incarnation requester, UUID sid) {
        return WireFrames.open(cluster, target, requester, scope, sid);
    }

    private String scenario(String name) throws Exception {
        UUID sid = UUID.randomUUID();
        Open.Builder open = validOpen(r(1), sid);
        NodeId unregistered = new NodeId(profile.memberPrefix() + "-" + KitPeerTls.UNREGISTERED);
        // under peer TLS the row's stream speaks as the node its Open claims as requester (issue 33)
        AdversarialRequester.Session s = peer.open(name.equals("unknown_requester") ? unregistered : r(1).nodeId());
        switch (name) {
            case "wrong_protocol" -> open.setProtocol("orbitkv/inventory-stream/v3");
            case "wrong_cluster" -> open.setClusterUuid(WireFrames.uuid(UUID.randomUUID()));
            case "stale_source_epoch" -> open.setSource(WireFrames.ref(olderTarget()));
            case "unknown_source" -> open.setSource(WireFrames.ref(new Incarnation(new NodeId(profile.memberPrefix() + "-nobody"),
                    new NodeEpoch(1), UUID.randomUUID())));
            case "unknown_requester" -> open.setRequester(WireFrames.ref(new Incarnation(unregistered, new NodeEpoch(1),
                    UUID.randomUUID())));
            case "suspended_membership" -> suspendMembership();
            case "fenced_source" -> {
                return fencedSource(s, sid);
            }
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
                    list.addNamespaces(ByteString.copyFrom(new byte[255]));
                }
                open.setScope(ScopeSpec.newBuilder().setList(list));
                Expect.that(openFrame(sid, open).getSerializedSize() > 64 << 10, "the crafted Open exceeds 64 KiB");
            }
            case "garbage_bytes" -> {
                s.sendBytes(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01, 0x02});
                return awaitError(s, deadline, wait, seen);
            }
            case "window_overflow" -> open.setReceiveWindowBytes(-1L);
            case "epoch_overflow" -> open.setRequester(WireFrames.ref(r(1)).toBuilder().setNodeEpoch(-1L));
            case "digest_short" -> open.setScopeDigest(ByteString.copyFrom(new byte[31]));
            case "open_session_mismatch" -> open.setSessionId(WireFrames.uuid(UUID.randomUUID()));
            case "first_frame_not_open" -> {
                s.send(RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setAck(Ack.newBuilder()
                        .setConsumedThroughFrame(1)).build());
                return awaitError(s, deadline, wait, seen);
            }
            case "resume_unknown_view" -> {
                open.setResume(ResumePoint.newBuilder().setViewId(WireFrames.uuid(UUID.randomUUID())).setAppliedCursor(3));
                s.send(openFrame(sid, open));
                SourceFrame f = s.nextFrame(deadline.bound(wait));
                return "accepted:" + f.getAccepted().getMode().name();
            }
            default -> {
                return afterOpen(name, s, sid, open);
            }
        }
        s.send(openFrame(sid, open));
        String outcome = awaitError(s, deadline, wait, seen);
        Expect.within(wait, "a refused Open leaves no served session (status.sessions.served)", () -> served(sid) == null);
        return outcome;
    }

    /** MEM-9: the target's membership view becomes invalid while its lease stays valid, where the target lets the kit. */
    private void suspendMembership() throws ScenarioSkipped {
        if (!fence.map(TargetFaults::suspendMembership).orElse(false)) {
            throw ScenarioSkipped.notObservable("MEM-9 needs a gap in the target's membership "
                    + "history (its watch falling behind an etcd compaction) or its etcd losing quorum while its lease is still "
                    + "valid; the kit's etcd access can compact or revoke (which fences, INV-7, even with --allow-fencing) but "
                    + "cannot make a connected watch miss revisions or stop a cluster it does not own");
        }
    }

    /**
     * INV-7 SES-5 with {@code --allow-fencing}: the kit revokes the target's member lease; once the target reports
     * {@code membership.lease = fenced}, an Open naming that incarnation must be refused with {@code FENCED}. If the
     * target heals (self-healing on), the healed target must be a new incarnation at a higher epoch that refuses
     * Opens naming the fenced one.
     */
    private String fencedSource(AdversarialRequester.Session s, UUID sid) throws Exception {
        TargetFaults f = fence.orElseThrow(() -> ScenarioSkipped.notApplicable("give --allow-fencing to fence the target"));
        Expect.within(deadline.bound(wait.multipliedBy(2)), "the target serves with valid membership before it is fenced",
                status::membershipValid);
        Incarnation current = status.incarnation();
        Open.Builder open = WireFrames.open(cluster, current, r(1), scope, sid);
        f.revoke(current);
        Expect.within(deadline.bound(wait), "INV-7: the target reports membership.lease fenced after its lease was revoked",
                () -> "fenced".equals(status.lease()));
        s.send(openFrame(sid, open));
        String outcome = awaitError(s, deadline, wait, seen);
        if (status.healEnabled()) {
            Expect.within(deadline.remaining(), "INV-7: the healed target is a new incarnation at a higher epoch than " + current,
                    () -> {
                        Incarnation now = status.incarnation();
                        return !now.equals(current) && now.epoch().value() > current.epoch().value()
                                && "healthy".equals(status.lease());
                    });
            UUID again = UUID.randomUUID();
            AdversarialRequester.Session old = peer.open(r(1).nodeId());
            old.send(openFrame(again, WireFrames.open(cluster, current, r(1), scope, again)));
            String refused = awaitError(old, deadline, wait, seen);
            Expect.that(refused.startsWith("error:"), "INV-7: the healed target refuses an Open naming the fenced incarnation "
                    + current + ", got " + refused);
        }
        return outcome;
    }

    /** An older incarnation of the target's node: the previous epoch, or the same epoch under another id. */
    private Incarnation olderTarget() {
        long epoch = target.epoch().value();
        return epoch > 1 ? new Incarnation(target.nodeId(), new NodeEpoch(epoch - 1), target.id())
                : new Incarnation(target.nodeId(), target.epoch(), UUID.randomUUID());
    }

    /** Scenarios after a valid Open: the kit reads the whole bootstrap first. */
    private String afterOpen(String name, AdversarialRequester.Session s, UUID sid, Open.Builder open) throws Exception {
        s.send(openFrame(sid, open));
        Bootstrap b = readBootstrap(s);
        RequesterFrame.Builder f = RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(sid));
        switch (name) {
            case "second_open" -> {
                s.send(openFrame(sid, open));
                return awaitError(s, deadline, wait, seen);
            }
            case "future_ack" -> {
                s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame + 5)).build());
                String outcome = awaitError(s, deadline, wait, seen);
                Expect.within(wait, "the session is gone from status.sessions.served", () -> served(sid) == null);
                return outcome;
            }
            case "duplicate_ack" -> {
                return duplicateAck(s, sid, b, f);
            }
            case "foreign_session_frame" -> {
                return foreignSessionFrame(s, sid, b, f);
            }
            case "replaced_session" -> {
                return replacedSession(s, sid, b, f);
            }
            case "session_limit" -> {
                if (profile.targetSourceSessionsMax().isEmpty()) {
                    throw ScenarioSkipped.notApplicable("the target's served-session limit is its configuration; give "
                            + "--target-source-sessions-max N to open N sessions and one more");
                }
                return sessionLimit(profile.targetSourceSessionsMax().getAsInt());
            }
            case "regenerate_above_sent" -> {
                s.send(f.setNeedRepair(NeedRepair.newBuilder().setViewId(WireFrames.uuid(b.viewId)).setAppliedCursor(b.s1 + 5)).build());
                return awaitError(s, deadline, wait, seen);
            }
            case "idle_liveness" -> {
                s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
                SourceFrame next = s.nextFrame(deadline.bound(Duration.ofMillis(profile.targetIdleLivenessMs()).plus(wait)));
                Expect.equal(next.getBodyCase(), SourceFrame.BodyCase.LIVENESS, "the next frame of an idle session");
                Expect.equal(next.getFrameNumber(), b.lastFrame + 1, "the liveness frame's number (SES-12)");
                Expect.equal(next.getLiveness().getSourceHead(), head(), "the advertised head = status head_sequence");
                TargetStatus.ServedSession st = served(sid);
                Expect.that(st != null, "the idle session is served");
                Expect.equal(st.cursor(), b.s1, "liveness never moves the session cursor");
                return "liveness";
            }
            default -> throw new IllegalArgumentException("unknown source scenario " + name);
        }
    }

    /** SES-13: a duplicate ACK returns no credit a second time and is counted. */
    private String duplicateAck(AdversarialRequester.Session s, UUID sid, Bootstrap b, RequesterFrame.Builder f) throws Exception {
        OptionalDouble before = status.counter("orbitkv_session_duplicate_acks_total", Map.of());
        Expect.equal(outstanding(sid), b.creditBytes(), "status outstanding_bytes before the ACK = the credit-consuming "
                + "bytes the kit received (SES-13: the source ledgers exactly their encoded size)");
        s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
        Expect.within(wait, "the ACK returns all outstanding credit", () -> outstanding(sid) == 0);
        s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
        if (before.isPresent()) {
            Expect.within(wait, "orbitkv_session_duplicate_acks_total counts the duplicate", () -> status.counter(
                    "orbitkv_session_duplicate_acks_total", Map.of()).orElse(0) >= before.getAsDouble() + 1);
        }
        Expect.equal(outstanding(sid), 0L, "outstanding credit after the duplicate ACK (never below zero: no second return)");
        return "duplicate";
    }

    /** An ACK under another session's id is dropped and counted; the session continues. */
    private String foreignSessionFrame(AdversarialRequester.Session s, UUID sid, Bootstrap b, RequesterFrame.Builder f) throws Exception {
        long outstanding = b.creditBytes();
        Expect.that(outstanding > 0, "the unacknowledged bootstrap holds credit (" + outstanding + " bytes received by the kit)");
        Expect.equal(outstanding(sid), outstanding, "status outstanding_bytes = the credit-consuming bytes the kit received");
        Map<String, String> side = Map.of("side", "source");
        OptionalDouble before = status.counter("orbitkv_session_mismatch_drops_total", side);
        s.send(RequesterFrame.newBuilder().setSessionId(WireFrames.uuid(UUID.randomUUID()))
                .setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
        if (before.isPresent()) {
            Expect.within(wait, "orbitkv_session_mismatch_drops_total{side=source} counts the drop", () -> status.counter(
                    "orbitkv_session_mismatch_drops_total", side).orElse(0) >= before.getAsDouble() + 1);
        }
        Expect.equal(outstanding(sid), outstanding, "outstanding credit after another session's ACK");
        s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
        Expect.within(wait, "the session continues: its own ACK returns the credit", () -> outstanding(sid) == 0);
        return "dropped";
    }

    /** SES-6: the replaced session's ACK returns none of the replacement's credit. */
    private String replacedSession(AdversarialRequester.Session s, UUID sid, Bootstrap b, RequesterFrame.Builder f) throws Exception {
        UUID sid2 = UUID.randomUUID();
        AdversarialRequester.Session s2 = peer.open(r(1).nodeId());
        s2.send(openFrame(sid2, validOpen(r(1), sid2)));
        Bootstrap b2 = readBootstrap(s2);
        String old = awaitError(s, deadline, wait, seen);
        try {
            s.send(f.setAck(Ack.newBuilder().setConsumedThroughFrame(b.lastFrame)).build());
        } catch (RuntimeException closed) {
            // the old stream is closed: nothing can reach the replacement through it
        }
        Expect.within(wait, "the replaced session is gone", () -> served(sid) == null);
        TargetStatus.ServedSession now = served(sid2);
        Expect.that(now != null, "the replacement session " + sid2 + " is served");
        Expect.equal(now.outstandingBytes(), b2.creditBytes(), "the old session's ACK returned none of the "
                + "replacement's credit: its outstanding_bytes = the " + b2.creditBytes() + " credit-consuming bytes the kit "
                + "received on it (last frame " + b2.lastFrame() + ")");
        return old;
    }

    /**
     * BND-3: opens kit sessions one at a time (each from its own kit requester member) until the target refuses
     * one; the refusal must come exactly when the target serves {@code limit} sessions (other members' included),
     * and no more Opens are sent than the limit leaves plus one.
     */
    private String sessionLimit(int limit) throws Exception {
        // Sessions of earlier kit rows may still be listed (a source notices a cancelled stream late); the kit's
        // requesters reopen from the same members, which replaces them (SES-6), so only the others are counted.
        String kitPrefix = profile.memberPrefix() + "-";
        int existing = 0;
        for (TargetStatus.ServedSession st : status.served()) {
            boolean kit = st.requester().contains(kitPrefix);
            existing += kit || "CLOSED".equals(st.phase()) ? 0 : 1;
        }
        if (existing >= limit) {
            throw ScenarioSkipped.notApplicable("the target already serves " + existing + " sessions, at or above "
                    + "--target-source-sessions-max " + limit);
        }
        ensureRequesters(limit - existing + 1);
        List<AdversarialRequester.Session> open = new ArrayList<>();
        for (int i = 1; i <= limit - existing + 1; i++) {
            UUID sid = UUID.randomUUID();
            AdversarialRequester.Session s = peer.open(r(i).nodeId());
            s.send(openFrame(sid, validOpen(r(i), sid)));
            SourceFrame first = s.nextFrame(deadline.bound(wait));
            seen.saw(first.getBodyCase().name(), "session " + i + ": " + first.getBodyCase()
                    + (first.hasError() ? " " + first.getError().getCause() : ""));
            if (first.hasError()) {
                int served = liveServed();
                Expect.equal(served, limit, "sessions the target serves when it refuses Open " + i + " with "
                        + first.getError().getCause() + " (BND-3: refused only beyond the limit)");
                return "error:" + first.getError().getCause().name();
            }
            open.add(s);
        }
        return "accepted " + (limit - existing + 1) + " kit sessions besides " + existing + " others, above the limit " + limit
                + " (status serves " + liveServed() + ")";
    }

    /** Sessions the target serves that are not closed (status.sessions.served[].phase). */
    private int liveServed() {
        int n = 0;
        for (TargetStatus.ServedSession st : status.served()) {
            n += "CLOSED".equals(st.phase()) ? 0 : 1;
        }
        return n;
    }

    /** This session's entry of {@code status.sessions.served[]}, or null. */
    private TargetStatus.ServedSession served(UUID sid) {
        for (TargetStatus.ServedSession st : status.served()) {
            if (sid.toString().equals(st.sessionId())) {
                return st;
            }
        }
        return null;
    }

    private long outstanding(UUID sid) {
        TargetStatus.ServedSession st = served(sid);
        if (st == null) {
            throw new AssertionError("session " + sid + " is not served (status.sessions.served)");
        }
        return st.outstandingBytes();
    }

    /**
     * A bootstrap as the kit received it; {@code creditBytes} is the encoded size of its credit-consuming frames
     * (SnapshotBegin, pages, SnapshotCommit, deltas) counted on the kit's side (protocol.md: the source
     * ledgers exactly these bytes), so credit checks never rest on the target's own report alone.
     */
    record Bootstrap(UUID viewId, long s1, long lastFrame, long creditBytes) {}

    /**
     * Reads OpenAccepted, SnapshotBegin, pages and replay through SnapshotCommit, checking numbering (SES-12),
     * that every namespace is in the session's scope (SES-7), the commit's transcript digest (SES-11) and
     * that the unacknowledged bytes received stay within the window granted in OpenAccepted (SES-13).
     */
    private Bootstrap readBootstrap(AdversarialRequester.Session s) throws InterruptedException {
        long expect = 1;
        TranscriptDigest.Builder digest = TranscriptDigest.builder();
        long credit = 0;
        long window = 0;
        while (true) {
            if (deadline.expired()) {
                throw new AssertionError("no SnapshotCommit within the row deadline of " + deadline.budget().toMillis() + " ms; "
                        + seen.summary());
            }
            Conversation.Received<SourceFrame> r = s.next(deadline.bound(wait));
            if (!(r instanceof Conversation.Received.Frame<SourceFrame> rf)) {
                throw new AssertionError("the bootstrap ended before SnapshotCommit: " + (r == null ? "nothing within "
                        + deadline.bound(wait).toMillis() + " ms" : r) + "; " + seen.summary());
            }
            SourceFrame f = rf.frame();
            seen.saw(f.getBodyCase().name(), f.getBodyCase() + " frame " + f.getFrameNumber());
            Expect.equal(f.getFrameNumber(), expect++, "SES-12 frame numbering of the bootstrap");
            if (f.hasError()) {
                throw new AssertionError("the target refused a valid Open: " + f.getError().getCause() + " " + f.getError().getDetail());
            }
            switch (f.getBodyCase()) {
                case SNAPSHOT_BEGIN -> digest.begin(f.getFrameNumber(), WireFrames.uuid(f.getSnapshotBegin().getViewId()),
                        new ScopeDigest(f.getSnapshotBegin().getScopeDigest().toByteArray()), f.getSnapshotBegin().getS0());
                case SNAPSHOT_PAGE -> digest.page(f.getFrameNumber(), f.getSnapshotPage().getPageOrdinal(),
                        records(f.getSnapshotPage().getNamespacesList(), f.getSnapshotPage().getRecordsList()));
                case DELTA -> digest.replay(f.getFrameNumber(), Interval.of(f.getDelta().getFrom(), f.getDelta().getTo()),
                        records(f.getDelta().getNamespacesList(), f.getDelta().getRecordsList()));
                case SNAPSHOT_COMMIT -> Expect.equal(HexFormat.of().formatHex(f.getSnapshotCommit().getTranscriptDigest().toByteArray()),
                        digest.finish().hex(), "SES-11: the SnapshotCommit's transcript_digest (the digest of the frames received)");
                case ACCEPTED -> window = f.getAccepted().getWindowBytes();
                default -> { }
            }
            if (f.hasSnapshotBegin() || f.hasSnapshotPage() || f.hasSnapshotCommit() || f.hasDelta()) {
                credit += rf.encodedBytes();
                // The kit ACKs nothing while it reads a bootstrap: everything received so far is outstanding.
                Expect.that(Long.compareUnsigned(credit, window) <= 0, "SES-13: " + credit + " unacknowledged bytes received, "
                        + "above the window_bytes " + Long.toUnsignedString(window) + " the target granted in OpenAccepted");
            }
            if (f.hasSnapshotCommit()) {
                return new Bootstrap(WireFrames.uuid(f.getSnapshotCommit().getViewId()), f.getSnapshotCommit().getS1(),
                        f.getFrameNumber(), credit);
            }
        }
    }

    /** A page's or replay delta's records, each namespace checked against the session's scope (SES-7). */
    private List<ResidenceRecord> records(List<ByteString> namespaces, List<orbitkv.inventory.wire.Record> wire) {
        for (ByteString ns : namespaces) {
            Expect.that(ns.equals(ByteString.copyFromUtf8(namespace)), "SES-7: the bootstrap names namespace '"
                    + ns.toStringUtf8() + "', outside the session's scope [" + namespace + "]");
        }
        List<ResidenceRecord> out = new ArrayList<>(wire.size());
        for (orbitkv.inventory.wire.Record r : wire) {
            Expect.that(r.getNamespaceIndex() < namespaces.size(), "a record's namespace_index within the frame's namespace table");
            StateKey key = new StateKey(new Namespace(namespaces.get(r.getNamespaceIndex()).toByteArray()), r.getKey().toByteArray());
            Medium medium = r.getMedium() == orbitkv.inventory.wire.Medium.MEDIUM_SSD ? Medium.SSD : Medium.DRAM;
            out.add(r.getOp() == orbitkv.inventory.wire.RecordOp.RECORD_OP_DELETE ? ResidenceRecord.delete(key, medium, r.getSequence())
                    : ResidenceRecord.put(key, medium, r.getSequence(), r.getSizeBytes()));
        }
        return out;
    }

    /**
     * Reads the session until the target's {@code Error} (the outcome {@code error:CAUSE}), the end of the
     * stream, or {@code wait} without any frame; other frames are noted in {@code seen} and skipped. However
     * many frames arrive (a target sending liveness forever), it returns or fails by {@code deadline}.
     */
    static String awaitError(AdversarialRequester.Session s, RowDeadline deadline, Duration wait, RowLog seen)
            throws InterruptedException {
        while (true) {
            if (deadline.expired()) {
                throw new AssertionError("no Error within the row deadline of " + deadline.budget().toMillis() + " ms; "
                        + seen.summary());
            }
            Conversation.Received<SourceFrame> r = s.next(deadline.bound(wait));
            if (r instanceof Conversation.Received.Frame<SourceFrame> f) {
                if (f.frame().hasError()) {
                    return "error:" + f.frame().getError().getCause().name();
                }
                seen.saw(f.frame().getBodyCase().name(), f.frame().getBodyCase() + " frame " + f.frame().getFrameNumber());
                continue;
            }
            if (r == null && deadline.expired()) {
                continue; // reported above with what the row saw
            }
            return r == null ? "nothing within " + wait.toMillis() + " ms" : r.toString();
        }
    }
}
