package orbitkv.conformance.kit;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.UUID;
import orbitkv.conformance.peer.AdversarialSource;
import orbitkv.conformance.peer.Conversation;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Liveness;
import orbitkv.inventory.wire.OpenAccepted;
import orbitkv.inventory.wire.OpenMode;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.Incarnation;

/**
 * The {@code requester} rows against the target's requester end: the kit registers a source member
 * ({@code <prefix>-src}, a new incarnation per row) whose peer endpoint is the kit's listener; the target
 * subscribes to it as to any member. The kit installs a view V of three rows at watermark 3 (a real
 * bootstrap: Begin, one page, Commit with the transcript digest), then sends the row's crafted frames. The
 * target's answers are read on the wire; its installed view of the kit source is read through its
 * {@link TargetStatus} (for a Manager API v1: {@code status.owners[]} (view_id, watermark) and
 * {@code /cache/query}, the replicas it lists for the kit source), so the same rows run black-box and in-process
 * ({@code AdversarialTableTest}, issue 34 item 6). After each row the kit source deregisters.
 */
final class RequesterScenarios {
    /** The idle observation window of {@code idle_ack_silence}: 30 ACK intervals of 10 ms. */
    static final Duration IDLE_WINDOW = Duration.ofMillis(300);
    /** ACKs within {@link #IDLE_WINDOW} of an idle session that count as an ACK loop (DELTA-12, normative). */
    static final int IDLE_ACK_LOOP = 3;
    private final ScenarioProfile profile;
    private final TargetStatus status;
    private final KitIdentities members;
    private final SessionRouter router;
    private final Incarnation target;
    private final Namespace ns;
    private final Duration wait;
    private Incarnation source;
    private volatile AdversarialSource.ScriptedSession ss;
    private volatile RowDeadline deadline;
    private volatile RowLog seen;
    private ScopeDigest scopeDigest;
    private UUID sid;
    private final UUID viewId = UUID.randomUUID();
    private long n;
    private final List<ResidenceRecord> rows;

    private final java.util.Optional<TargetFaults> fence;

    RequesterScenarios(ScenarioProfile profile, TargetStatus status, KitIdentities members, SessionRouter router, Incarnation target,
            Namespace ns, java.util.Optional<TargetFaults> fence) {
        this.fence = fence;
        this.profile = profile;
        this.status = status;
        this.members = members;
        this.router = router;
        this.target = target;
        this.ns = ns;
        this.wait = profile.answerBound();
        this.rows = List.of(ResidenceRecord.put(key(1), Medium.DRAM, 1, 10), ResidenceRecord.put(key(2), Medium.DRAM, 2, 20),
                ResidenceRecord.put(key(3), Medium.SSD, 3, 30));
    }

    StateKey key(int i) {
        return new StateKey(ns, new byte[] {(byte) (i >>> 8), (byte) i});
    }

    /** Runs one row within {@code deadline}, noting what the target sends in {@code seen}; returns the outcome token. */
    String run(ScenarioRow row, RowDeadline deadline, RowLog seen) throws Exception {
        this.deadline = deadline;
        this.seen = seen;
        if (row.scenario().equals("requester_fenced") && fence.isEmpty()) {
            throw ScenarioSkipped.notApplicable("give --allow-fencing to fence the target");
        }
        source = register();
        try {
            installPreamble();
            if (row.scenario().equals("requester_fenced")) {
                return requesterFenced();
            }
            Map<String, String> before = rowsNow(source);
            String outcome = scenario(row.scenario());
            if (row.scenario().equals("source_left_membership")) {
                Incarnation old = oldSource;
                Expect.within(wait, "the replaced kit source " + old + " is excluded: no replica of it listed (IDX-13)",
                        () -> rowsNow(old).isEmpty());
            } else {
                TargetStatus.InstalledView owner = status.installed(source).orElse(null);
                Expect.that(owner != null, "the target still lists an owner row for the kit source");
                Expect.equal(owner.viewId(), viewId.toString(), "installed view id unchanged");
                Expect.equal(owner.watermark(), 3L, "installed watermark unchanged");
                Expect.equal(rowsNow(source), before, "installed rows unchanged (query)");
            }
            return outcome;
        } finally {
            if (ss != null) {
                ss.complete();
            }
            members.release(source);
        }
    }

    private Incarnation oldSource;

    /**
     * INV-7 with {@code --allow-fencing}: with the kit source's view installed, the kit revokes the target's member
     * lease; the target's requester must close its session to the kit source with {@code Error(FENCED)} and report
     * {@code membership.lease = fenced} (or, healed already, a new incarnation); its view of the kit source is V at 3
     * or gone, never changed.
     */
    private String requesterFenced() throws Exception {
        Incarnation current = status.incarnation();
        fence.orElseThrow().revoke(current);
        String outcome = awaitAnswer();
        Expect.within(deadline.bound(wait), "INV-7: the target is fenced (membership.lease) or healed as a new incarnation",
                () -> "fenced".equals(status.lease()) || !status.incarnation().equals(current));
        Optional<TargetStatus.InstalledView> o = status.installed(source);
        boolean healed = !status.incarnation().equals(current); // read after the view: a healed target has a new index
        Expect.that(healed || o.map(v -> viewId.toString().equals(v.viewId()) && v.watermark() == 3).orElse(true), "INV-7: the "
                + "fenced target's view of the kit source is untouched (V at 3) or dropped, never changed: " + o);
        return outcome;
    }

    /** The row's deadline passed: ends the kit source's session, so the row's waits return. */
    void cancel() {
        AdversarialSource.ScriptedSession s = ss;
        if (s != null) {
            s.complete();
        }
    }

    /** The target's next item on the kit source's session, within the row's deadline; frames are noted in the row log. */
    private Conversation.Received<RequesterFrame> next() throws InterruptedException {
        if (deadline.expired()) {
            throw new AssertionError("the row deadline of " + deadline.budget().toMillis() + " ms passed; " + seen.summary());
        }
        Conversation.Received<RequesterFrame> r = ss.next(deadline.bound(wait));
        if (r instanceof Conversation.Received.Frame<RequesterFrame> f) {
            seen.saw(f.frame().getBodyCase().name(), describe(f.frame()));
        }
        return r;
    }

    private RequesterFrame nextFrame() throws InterruptedException {
        Conversation.Received<RequesterFrame> r = next();
        if (r instanceof Conversation.Received.Frame<RequesterFrame> f) {
            return f.frame();
        }
        throw new AssertionError("expected a frame from the target within " + wait.toMillis() + " ms, got "
                + (r == null ? "nothing" : r) + "; " + seen.summary());
    }

    private static String describe(RequesterFrame f) {
        return f.hasAck() ? "ACK through " + f.getAck().getConsumedThroughFrame() + " cursor " + f.getAck().getAppliedCursor()
                : f.hasError() ? "Error " + f.getError().getCause() : f.getBodyCase().name();
    }

    private Incarnation register() {
        Incarnation m = members.register("src").incarnation();
        router.expect(m);
        return m;
    }

    /** The replicas the target lists for {@code owner} over keys 1..5: "key/medium" → "sequence/size". */
    private Map<String, String> rowsNow(Incarnation owner) {
        List<StateKey> keys = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            keys.add(key(i));
        }
        return status.replicas(owner, ns, keys);
    }

    private SourceFrame.Builder frame() {
        return SourceFrame.newBuilder().setSessionId(WireFrames.uuid(sid)).setFrameNumber(n++);
    }

    private void accept(RequesterFrame open, OpenMode mode) {
        sid = WireFrames.uuid(open.getOpen().getSessionId());
        scopeDigest = new ScopeDigest(open.getOpen().getScopeDigest().toByteArray());
        n = 1;
        ss.send(frame().setAccepted(OpenAccepted.newBuilder().setMode(mode).setSourceHead(3).setOldestRetained(1)
                .setWindowBytes(8 << 20)).build());
    }

    /** A real bootstrap from the kit source: view V installed at 3 with three rows. */
    private void installPreamble() throws Exception {
        SessionRouter.Routed r = router.next(deadline.bound(wait.multipliedBy(2)));
        ss = r.session();
        Expect.that(!r.open().getOpen().hasResume(), "a first session to a new source incarnation asks for no resume");
        accept(r.open(), OpenMode.OPEN_MODE_BOOTSTRAP);
        TranscriptDigest digest = TranscriptDigest.builder().begin(2, viewId, scopeDigest, 3).page(3, 1, rows).finish();
        ss.send(frame().setSnapshotBegin(WireFrames.begin(viewId, 3, scopeDigest)).build());
        ss.send(frame().setSnapshotPage(WireFrames.page(viewId, 1, rows)).build());
        ss.send(frame().setSnapshotCommit(WireFrames.commit(viewId, 3, 1, 2, 3, 3, digest)).build());
        Incarnation inc = source;
        try {
            Expect.within(wait, "the target installs the kit source's view at watermark 3 (status.owners)", () -> status.installed(inc)
                    .map(o -> viewId.toString().equals(o.viewId()) && o.watermark() == 3).orElse(false));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; target answered " + ss.next(Duration.ofMillis(100)) + ", owner row "
                    + status.installed(inc), e);
        }
    }

    private String scenario(String name) throws Exception {
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
            case "oversized_encoded" -> ss.send(frame().setDelta(oversizedEncoded()).build());
            case "oversized_decoded" -> ss.send(frame().setDelta(oversizedDecoded()).build());
            case "unknown_enum_medium" -> ss.send(frame().setDelta(Delta.newBuilder().setFrom(3).setTo(4)
                    .addNamespaces(ByteString.copyFrom(ns.bytes())).addRecords(Record.newBuilder().setNamespaceIndex(0)
                            .setKey(ByteString.copyFromUtf8("k")).setMediumValue(9).setOp(RecordOp.RECORD_OP_PUT)
                            .setSequence(4).setSizeBytes(1))).build());
            case "key_too_long" -> ss.send(frame().setDelta(Delta.newBuilder().setFrom(3).setTo(4)
                    .addNamespaces(ByteString.copyFrom(ns.bytes())).addRecords(Record.newBuilder().setNamespaceIndex(0)
                            .setKey(ByteString.copyFrom(new byte[65])).setMedium(orbitkv.inventory.wire.Medium.MEDIUM_DRAM)
                            .setOp(RecordOp.RECORD_OP_PUT).setSequence(4).setSizeBytes(1))).build());
            case "record_outside_interval" -> ss.send(frame().setDelta(WireFrames.delta(3, 4, List.of(
                    ResidenceRecord.put(key(4), Medium.DRAM, 7, 1)))).build());
            case "sequence_overflow" -> ss.send(frame().setDelta(Delta.newBuilder().setFrom(3).setTo(-1L)).build());
            case "foreign_session_frame" -> {
                return foreignSessionFrame();
            }
            case "replaced_session_frame" -> {
                return replacedSessionFrame();
            }
            case "commit_without_pages" -> commitWithoutPages();
            case "digest_mismatch" -> digestMismatch();
            case "scope_digest_short" -> ss.send(frame().setSnapshotBegin(WireFrames.begin(UUID.randomUUID(), 3, scopeDigest)
                    .toBuilder().setScopeDigest(ByteString.copyFrom(new byte[31]))).build());
            case "page_after_replay" -> {
                UUID v2 = UUID.randomUUID();
                ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scopeDigest)).build());
                ss.send(frame().setDelta(WireFrames.delta(3, 4, List.of(ResidenceRecord.put(key(4), Medium.DRAM, 4, 1)))).build());
                ss.send(frame().setSnapshotPage(WireFrames.page(v2, 1, rows)).build());
            }
            case "staged_page_credit" -> {
                UUID v2 = UUID.randomUUID();
                ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scopeDigest)).build());
                long page = n;
                ss.send(frame().setSnapshotPage(WireFrames.page(v2, 1, rows)).build());
                return awaitStagedAck(page, v2);
            }
            case "idle_ack_silence" -> {
                return awaitSilence(n - 1);
            }
            case "source_left_membership" -> sourceLeftMembership();
            default -> throw new IllegalArgumentException("unknown requester scenario " + name);
        }
        return awaitAnswer();
    }

    /** A frame under a session id the target never opened is dropped and counted. */
    private String foreignSessionFrame() throws Exception {
        Map<String, String> side = Map.of("side", "requester");
        OptionalDouble before = status.counter("orbitkv_session_mismatch_drops_total", side);
        ss.send(SourceFrame.newBuilder().setSessionId(WireFrames.uuid(UUID.randomUUID())).setFrameNumber(n)
                .setDelta(WireFrames.delta(3, 4, List.of(ResidenceRecord.put(key(4), Medium.DRAM, 4, 1)))).build());
        long frameNo = n;
        ss.send(frame().setDelta(WireFrames.delta(1, 3, List.of())).build());
        awaitAck(frameNo);
        if (before.isPresent()) {
            Expect.within(wait, "orbitkv_session_mismatch_drops_total{side=requester} counts the drop", () -> status.counter(
                    "orbitkv_session_mismatch_drops_total", side).orElse(0) >= before.getAsDouble() + 1);
        }
        return "dropped";
    }

    /** A frame of the session the target replaced (after its resume) is dropped. */
    private String replacedSessionFrame() throws Exception {
        UUID oldSid = sid;
        ss.complete();
        SessionRouter.Routed r = router.next(deadline.bound(wait.multipliedBy(2)));
        ss = r.session();
        RequesterFrame open = r.open();
        Expect.equal(open.getOpen().getResume().getAppliedCursor(), 3L, "SNAP-8 resume from the installed view");
        Expect.that(!WireFrames.uuid(open.getOpen().getSessionId()).equals(oldSid), "the new session has a new id");
        accept(open, OpenMode.OPEN_MODE_RESUMED);
        ss.send(SourceFrame.newBuilder().setSessionId(WireFrames.uuid(oldSid)).setFrameNumber(n)
                .setDelta(WireFrames.delta(3, 4, List.of(ResidenceRecord.put(key(4), Medium.DRAM, 4, 1)))).build());
        long frameNo = n;
        ss.send(frame().setDelta(WireFrames.delta(1, 3, List.of())).build());
        awaitAck(frameNo);
        return "dropped";
    }

    /** A snapshot commit that claims pages never sent. */
    private void commitWithoutPages() throws Exception {
        UUID v2 = UUID.randomUUID();
        long begin = n;
        ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scopeDigest)).build());
        TranscriptDigest d = TranscriptDigest.builder().begin(begin, v2, scopeDigest, 3).finish();
        ss.send(frame().setSnapshotCommit(WireFrames.commit(v2, 3, 2, begin, begin, 0, d)).build());
    }

    /** A snapshot commit whose transcript digest is not the pages' digest. */
    private void digestMismatch() throws Exception {
        UUID v2 = UUID.randomUUID();
        long begin = n;
        ss.send(frame().setSnapshotBegin(WireFrames.begin(v2, 3, scopeDigest)).build());
        ss.send(frame().setSnapshotPage(WireFrames.page(v2, 1, rows)).build());
        byte[] wrong = TranscriptDigest.builder().begin(begin, v2, scopeDigest, 3).finish().bytes();
        ss.send(frame().setSnapshotCommit(WireFrames.commit(v2, 3, 1, begin, begin + 1, 3, new TranscriptDigest(wrong))).build());
    }

    /** The kit source re-registers at its next epoch: the old incarnation left membership. */
    private void sourceLeftMembership() throws Exception {
        oldSource = source;
        Incarnation replaced = source;
        source = members.register("src").incarnation(); // the same node id at the next epoch replaces the record
        members.release(replaced);
        router.expect(source); // the target's sessions to the new incarnation are refused
    }

    /** A delta whose encoded size exceeds the target's encoded frame bound (but not gRPC's 4 MiB message limit). */
    private Delta oversizedEncoded() throws ScenarioSkipped {
        long bound = profile.targetFrameEncodedBytesMax();
        if (bound + (64 << 10) >= KitSettings.GRPC_INBOUND_MESSAGE_BYTES_DEFAULT) {
            throw ScenarioSkipped.notApplicable("--target-frame-encoded-bytes-max " + bound + " is within 64 KiB of gRPC's "
                    + "default 4 MiB message limit: a refusal could come from gRPC, not the session");
        }
        // Just above the bound (by less than one record plus the frame header): a target may size gRPC's own
        // inbound limit a little above its frame bound (the reference adds 64 KiB), and a delta far above the
        // bound would then be refused by gRPC, not by the session under test.
        ResidenceRecord one = ResidenceRecord.put(new StateKey(ns, new byte[64]), Medium.DRAM, 4, 1);
        int perRecord = WireFrames.delta(3, 4, List.of(one, one)).getSerializedSize()
                - WireFrames.delta(3, 4, List.of(one)).getSerializedSize();
        long count = bound / perRecord + 1;
        List<ResidenceRecord> big = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            big.add(one);
        }
        Delta d = WireFrames.delta(3, 4, big);
        Expect.that(d.getSerializedSize() > bound, "the crafted delta (" + d.getSerializedSize() + " bytes) exceeds " + bound);
        Expect.that(d.getSerializedSize() < bound + (4 << 10),
                "the crafted delta (" + d.getSerializedSize() + " bytes) stays within 4 KiB of " + bound);
        return d;
    }

    /**
     * A delta that fits the encoded bound but whose records decode above the decoded bound, by this
     * implementation's accounting (48 + key + namespace bytes per record; a {@code policy:} row).
     */
    private Delta oversizedDecoded() throws ScenarioSkipped {
        Namespace wide = new Namespace(("kit-" + "w".repeat(251)).getBytes(StandardCharsets.UTF_8));
        int perRecord = 48 + 2 + wide.length();
        long count = profile.targetFrameDecodedBytesMax() / perRecord + 1;
        if (count > 60_000) {
            throw ScenarioSkipped.notApplicable("the decoded bound needs more than 60,000 records of 2-byte keys");
        }
        Delta.Builder d = Delta.newBuilder().setFrom(3).setTo(3 + count).addNamespaces(ByteString.copyFrom(wide.bytes()));
        for (int i = 0; i < count; i++) {
            d.addRecords(Record.newBuilder().setNamespaceIndex(0).setKey(ByteString.copyFrom(new byte[] {(byte) (i >>> 8), (byte) i}))
                    .setMedium(orbitkv.inventory.wire.Medium.MEDIUM_DRAM).setOp(RecordOp.RECORD_OP_DELETE).setSequence(4 + i));
        }
        Delta built = d.build();
        if (built.getSerializedSize() > profile.targetFrameEncodedBytesMax()) {
            throw ScenarioSkipped.notApplicable("no delta of " + count + " records exceeds the decoded bound within the encoded bound ("
                    + built.getSerializedSize() + " > " + profile.targetFrameEncodedBytesMax() + " bytes)");
        }
        return built;
    }

    /** The target's next meaningful answer: an Error, a ResumeFrom or a NeedRepair (ACKs skipped). */
    private String awaitAnswer() throws InterruptedException {
        while (true) {
            Conversation.Received<RequesterFrame> r = next();
            if (!(r instanceof Conversation.Received.Frame<RequesterFrame> f)) {
                return r == null ? "nothing within " + wait.toMillis() + " ms" : r.toString();
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

    /** SES-14: the ACK of a staged page names the staging view at the installed watermark; V stays installed (status). */
    private String awaitStagedAck(long pageFrame, UUID staging) throws InterruptedException {
        while (true) {
            Conversation.Received<RequesterFrame> r = next();
            if (r == null) {
                return "no ack within " + wait.toMillis() + " ms"; // the permitted choice not to return the page's credit
            }
            if (!(r instanceof Conversation.Received.Frame<RequesterFrame> f)) {
                throw new AssertionError("expected ACKs while staging, got " + r + "; " + seen.summary());
            }
            RequesterFrame rf = f.frame();
            Expect.that(rf.hasAck(), "only ACKs while staging, got " + rf.getBodyCase());
            requireReceived(rf);
            if (rf.getAck().getConsumedThroughFrame() >= pageFrame) {
                // Whether to ACK a staged page is the target's choice (SES-14 "may"); what the ACK says is not.
                normative(WireFrames.uuid(rf.getAck().getViewId()).equals(staging), "SES-14: the ACK of a staged page names the "
                        + "staging view " + staging + ", got " + WireFrames.uuid(rf.getAck().getViewId()));
                normative(rf.getAck().getAppliedCursor() == 3L, "SES-14: the ACK of a staged page keeps the installed watermark 3 "
                        + "as its applied cursor, got " + rf.getAck().getAppliedCursor());
                Optional<TargetStatus.InstalledView> o = status.installed(source);
                normative(o.map(v -> viewId.toString().equals(v.viewId()) && v.watermark() == 3).orElse(false),
                        "SES-14: view V stays installed at 3 while the page is staged (status.owners: " + o + ")");
                return "ack";
            }
        }
    }

    /** DELTA-12: after everything sent is ACKed, nothing more arrives within {@link #IDLE_WINDOW}. */
    private String awaitSilence(long lastFrame) throws InterruptedException {
        while (true) {
            RequesterFrame rf = nextFrame();
            Expect.that(rf.hasAck(), "only ACKs, got " + rf.getBodyCase());
            requireReceived(rf);
            if (rf.getAck().getConsumedThroughFrame() >= lastFrame) {
                break;
            }
        }
        // DELTA-12 requires no loop of empty ACKs; silence is this implementation's choice (a policy row).
        long windowEnd = System.nanoTime() + IDLE_WINDOW.toNanos();
        int acks = 0;
        List<String> extra = new ArrayList<>();
        while (true) {
            long left = windowEnd - System.nanoTime();
            if (left <= 0) {
                break;
            }
            Conversation.Received<RequesterFrame> r = ss.next(deadline.bound(Duration.ofNanos(left)));
            if (r == null) {
                continue;
            }
            if (!(r instanceof Conversation.Received.Frame<RequesterFrame> f)) {
                extra.add(r.toString());
                break;
            }
            seen.saw(f.frame().getBodyCase().name(), describe(f.frame()));
            acks += f.frame().hasAck() ? 1 : 0;
            extra.add(describe(f.frame()));
        }
        normative(acks < IDLE_ACK_LOOP, "DELTA-12: an idle session loops empty ACKs: " + acks + " ACKs within "
                + IDLE_WINDOW.toMillis() + " ms after everything sent was acknowledged");
        return extra.isEmpty() ? "silent" : "sent while idle: " + String.join(", ", extra);
    }

    /** A failed check of what the design requires, inside a policy row: it fails the row. */
    private static void normative(boolean condition, String what) {
        if (!condition) {
            throw new NormativeFailure(what);
        }
    }

    /**
     * SES-13: an ACK never names a frame the kit source has not sent (the last sent is {@code n - 1}); normative,
     * so it fails a policy row too.
     */
    private void requireReceived(RequesterFrame rf) {
        if (rf.hasAck()) {
            normative(rf.getAck().getConsumedThroughFrame() < n, "SES-13: the target ACKs frame "
                    + rf.getAck().getConsumedThroughFrame() + ", beyond the last frame the kit source sent (" + (n - 1) + ")");
        }
    }

    /** Waits for an ACK covering {@code frameNo} with no Error or regeneration request before it. */
    private String awaitAck(long frameNo) throws InterruptedException {
        while (true) {
            RequesterFrame rf = nextFrame();
            requireReceived(rf);
            if (rf.hasAck() && rf.getAck().getConsumedThroughFrame() >= frameNo) {
                Expect.equal(rf.getAck().getAppliedCursor(), 3L, "the ACK's applied cursor");
                return "ack";
            }
            Expect.that(rf.hasAck(), "only ACKs before the covering ACK, got " + rf.getBodyCase());
        }
    }
}
