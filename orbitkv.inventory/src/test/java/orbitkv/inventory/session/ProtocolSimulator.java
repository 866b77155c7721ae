package orbitkv.inventory.session;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.UUID;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.ViewReceiver;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.inventory.source.SourceInventory;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.RecordOp;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.membership.ProtocolClock;

/**
 * A deterministic, single-threaded simulator of the InventorySession protocol on virtual time (issue 25), driving the
 * production session cores (issue 38).
 *
 * <p><b>Real code driven</b> (production classes, unchanged): both sans-I/O session cores. The source end is
 * {@link SourceCore} ({@link OpenCheck} on real protobuf {@link RequesterFrame}s, the receive checks, the
 * {@link CreditLedger}, the {@link SourceState} machine, the snapshot and delta pump {@link SourcePump} with its
 * {@link TranscriptDigest}, the coalescing window, the snapshot retry backoff and liveness, each on its own timer
 * driven in virtual time) over the real {@link InventorySource} (resident map, bounded journal with trimming,
 * partitioner and coalescer, snapshot pager with S0/S1 and replay, the journal's armed wake-up), and each source's
 * shared send scheduling {@link SendScheduler} (ROUTE-10: which session's pump step runs next; barriers from the
 * schedule's puts raise a session, one requester's subscription may be favoured, priority is off for one seed in
 * four). The requester end is
 * {@link RequesterCore} (every receive check with {@link FrameCheck}, stream identity SES-6, the frame-number gap
 * check, the {@link RequesterState} machine, the ACK cadence and the receive deadline). Every source frame is the
 * core's encoding (SourceFrameEncoder for pages and deltas, protobuf for control frames) decoded as the requester's
 * transport does (SourceFrameDecoder, the generated parser); requester frames are serialized and parsed on every
 * {@value #FULL_ENCODE_EVERY}th schedule. The seeded bugs are package-private hooks of the cores
 * ({@link RequesterCore.Fault}, {@link SourceCore.Fault}) except the two receiver bugs of {@link SimReceiver}.
 *
 * <p><b>Model</b> (this file): the network (streams, delivery, loss, duplication, the byzantine page and commit
 * edits), the shells' parts (admission and the session bound, committed views, the connect loop's timing, each
 * core's one timer), the requester's view receiver ({@link SimReceiver}: the GlobalIndex lives in
 * {@code orbitkv.index}, which depends on this module, so a slot map per view restates its staging, install and
 * commit checks and serves as the oracle), and membership propagation. The old model of the source's pump is gone:
 * the oracles (the resident map after every sequence, the committer of every view) are independent of the cores.
 *
 * <p>A run is a pure function of its seed (and bug and kept schedule steps): one {@link SplittableRandom}
 * drives the schedule and every choice (view ids and the snapshot retry jitter included), the clock is the event
 * queue's, and ties break by insertion order. The trace hash folds every dispatched event and every sent frame.
 */
final class ProtocolSimulator {
    static final ClusterIdentity CLUSTER = new ClusterIdentity("sim", new UUID(25, 25));
    static final int NAMESPACES = 2;
    static final int KEYS = 4;
    static final int SLOTS = NAMESPACES * KEYS * 2;
    static final long MS = 1_000_000L;
    /** The receive window of every session (bytes) and its frame bound: small, so credit runs out often. */
    static final long WINDOW_BYTES = 1024;
    static final int WINDOW_FRAMES = 4;
    static final long LIVENESS_MS = 100;
    /** Virtual time after the last scheduled step in which every fault is healed and the protocol must converge. */
    static final long SETTLE_MS = 4000;
    static final int SESSIONS_PER_SOURCE_MAX = 8;
    static final int COMMITTED_VIEWS_MAX = 8;
    static final int EVENTS_MAX = 200_000;
    /**
     * The source's shared send scheduling (ROUTE-10, issue 39 item 5): one pump step of a source at a time, each
     * holding its permit this long (the virtual cost of encoding), so sessions of one source contend and the
     * scheduler's class decides who goes next.
     */
    static final int SEND_PERMITS = 1;
    static final long STEP_HOLD_NANOS = 500_000L;

    static final InventoryConfig INVENTORY = InventoryConfig.defaults().withJournalRecordsMax(12)
            .withFrameEncodedBytesMax(256).withPageRecordsMax(3).withInputRecordsMax(6).withWindow(1, 2);
    static final SessionConfig SESSION = SessionConfig.defaults().withFrameBytesMax(512, 4096).withReceiveWindowBytes(WINDOW_BYTES)
            .withWindowFramesMax(WINDOW_FRAMES).withLivenessIntervalMs(LIVENESS_MS).withBackoffMs(2, 20, 5, 100);

    private static final Namespace[] NS = {Namespace.utf8("a"), Namespace.utf8("b")};
    private static final StateKey[] KEY = new StateKey[NAMESPACES * KEYS];

    static {
        for (int n = 0; n < NAMESPACES; n++) {
            for (int k = 0; k < KEYS; k++) {
                KEY[n * KEYS + k] = new StateKey(NS[n], new byte[] {(byte) k});
            }
        }
    }

    /** The schedule's step kinds: workload, membership, network and receiver faults. */
    enum Kind { PUT, DELETE, BURST, RESET, RESTART, LEAVE, JOIN, FENCE, SUSPEND, PARTITION, LOSSY, DUPLICATE, SLOW, STARVE,
        CORRUPT, FORGE }

    /** One scheduled step at virtual {@code atMs}; {@code src}, {@code req}, {@code arg} as the kind needs. */
    record Step(long atMs, Kind kind, int src, int req, int arg) {
        @Override
        public String toString() {
            return "@" + atMs + "ms " + kind + " s" + src + " r" + req + " " + arg;
        }
    }

    /**
     * What one run came to; {@code violation} is null when every oracle held. {@code outranked}: grants of the
     * sources' send schedulers to a raised session (BARRIER or HIGH) while other sessions waited, plus steps that
     * yielded to a higher class (ROUTE-10 exercised).
     */
    record Result(long seed, String violation, long traceHash, long events, int steps, long outranked) {
        boolean failed() {
            return violation != null;
        }
    }

    /** A counted violation: stops the run. */
    static final class Violation extends RuntimeException {
        Violation(String oracle, String detail) {
            super(oracle + ": " + detail, null, false, false);
        }
    }

    // ---------------------------------------------------------------- schedule

    /**
     * A schedule class: the fault kinds a schedule draws (its workload is always puts, deletes and bursts). Each
     * scenario of the real-process campaign ({@code conformance}'s {@code Scenario}) maps to the class of the same
     * name, so a campaign seed's scenario names the simulator schedules that exercise the same faults.
     */
    enum ScheduleClass {
        /** Every fault kind, in the default proportions (what the test and a plain campaign run). */
        MIXED(),
        FRAME_FAULTS(Kind.DUPLICATE, Kind.CORRUPT, Kind.FORGE, Kind.LOSSY),
        PEER_PARTITION(Kind.PARTITION),
        HOST_PARTITION(Kind.PARTITION, Kind.RESET),
        STALLED_SUBSCRIBER(Kind.STARVE),
        RETENTION_OVERRUN(Kind.STARVE, Kind.BURST),
        DELAY(Kind.SLOW, Kind.LOSSY),
        LINK_LATENCY(Kind.SLOW),
        CONNECTION_RESETS(Kind.RESET),
        ETCD_PARTITION_SHORT(Kind.SUSPEND),
        ETCD_MEMBER_LOSS(Kind.SUSPEND),
        ETCD_PARTITION_FENCE(Kind.FENCE, Kind.SUSPEND),
        SIGSTOP_BEYOND_LEASE(Kind.FENCE, Kind.STARVE),
        LEASE_REVOKE(Kind.FENCE),
        QUORUM_LOSS(Kind.SUSPEND, Kind.FENCE),
        KILL9(Kind.RESTART, Kind.LEAVE),
        KILL9_SOURCE_MID_SNAPSHOT(Kind.RESTART),
        KILL9_REQUESTER_MID_SNAPSHOT(Kind.RESET),
        KILL9_SOURCE_MID_DELTA(Kind.RESTART),
        KILL9_REQUESTER_MID_DELTA(Kind.RESET);

        final Kind[] faults;

        ScheduleClass(Kind... faults) {
            this.faults = faults;
        }
    }

    /** The schedule of {@code seed} in the default class: a pure function of it. */
    static List<Step> schedule(long seed) {
        return schedule(seed, ScheduleClass.MIXED);
    }

    /** The schedule of {@code seed} in {@code cls}: a pure function of both. */
    static List<Step> schedule(long seed, ScheduleClass cls) {
        SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 25);
        int sources = 1 + r.nextInt(2);
        int requesters = 1 + r.nextInt(2);
        int n = 12 + r.nextInt(30);
        List<Step> steps = new ArrayList<>(n + 1);
        steps.add(new Step(0, Kind.JOIN, sources, requesters, 0)); // step 0 fixes the cast; never shrunk away
        long t = 0;
        for (int i = 0; i < n; i++) {
            t += r.nextInt(60);
            int s = r.nextInt(sources);
            int q = r.nextInt(requesters);
            int p = r.nextInt(100);
            Kind k = p < 34 ? Kind.PUT : p < 46 ? Kind.DELETE : p < 52 ? Kind.BURST : p < 58 ? Kind.RESET
                    : p < 61 ? Kind.RESTART : p < 63 ? Kind.LEAVE : p < 64 ? Kind.FENCE : p < 67 ? Kind.SUSPEND
                    : p < 71 ? Kind.PARTITION : p < 76 ? Kind.LOSSY : p < 81 ? Kind.DUPLICATE : p < 87 ? Kind.SLOW
                    : p < 92 ? Kind.STARVE : p < 96 ? Kind.CORRUPT : Kind.FORGE;
            if (cls != ScheduleClass.MIXED && p >= 52) { // a fault: one of the class's kinds instead
                k = cls.faults[p % cls.faults.length];
            }
            steps.add(new Step(t, k, s, q, r.nextInt(SLOTS * 8)));
        }
        return steps;
    }

    /** Runs {@code seed} with its whole schedule. */
    static Result run(long seed, SimBug bug) {
        return run(seed, bug, schedule(seed));
    }

    static Result run(long seed, SimBug bug, List<Step> steps) {
        ProtocolSimulator sim = new ProtocolSimulator(seed, bug, steps);
        String violation = null;
        try {
            sim.execute();
        } catch (Violation v) {
            violation = v.getMessage();
        } catch (RuntimeException e) { // a real class refused an edge or an input: a bug of the driven protocol
            violation = "invariant: " + e;
        }
        return new Result(seed, violation, sim.trace, sim.events, steps.size(), sim.outranked);
    }

    // ---------------------------------------------------------------- machinery

    private final SimBug bug;
    /**
     * The sources' session config of this run (ROUTE-10): priority on for three seeds in four, and requester r0's
     * whole subscription favoured for one seed in three; requesters keep {@link #SESSION}.
     */
    private final SessionConfig sourceConfig;
    /** Every {@value #FULL_ENCODE_EVERY}th schedule also serializes and parses every control frame (issue 38 item 3). */
    static final int FULL_ENCODE_EVERY = 8;
    private final boolean full;
    /** The requesters' membership view: valid, admitting every incarnation (the sources' views carry the faults). */
    private static final MembershipView VIEW_OF_REQUESTERS = new AdmitAll();
    private final List<Step> steps;
    private final SplittableRandom rng;
    private final PriorityQueue<Ev> queue = new PriorityQueue<>();
    private long now;
    private long seq;
    private long events;
    /** See {@link Result#outranked}. */
    private long outranked;
    private long trace = 0xcbf29ce484222325L;
    private SrcNode[] sources;
    private ReqNode[] requesters;
    private final ArrayList<SrcInc> incarnations = new ArrayList<>();
    /** Owner incarnation of every put size ever published (sizes are unique: 1, 2, 3, ...). */
    private final ArrayList<SrcInc> ownerOfSize = new ArrayList<>();
    /** The incarnation that committed each view (looked up, never iterated). */
    private final java.util.HashMap<UUID, SrcInc> committerOf = new java.util.HashMap<>();
    private boolean healed;
    /** Set once, after healing, every requester holds every source's head and nothing is in flight. */
    private boolean settled;
    private final ProtocolClock clock = new ProtocolClock() {
        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public Scheduled schedule(Runnable task, long delayNanos) {
            throw new UnsupportedOperationException("the simulator schedules its own events");
        }
    };

    private ProtocolSimulator(long seed, SimBug bug, List<Step> steps) {
        this.bug = bug;
        this.sourceConfig = SESSION.withSendScheduling(SEND_PERMITS, Math.floorMod(seed, 4) != 0,
                Math.floorMod(seed, 3) == 0 ? java.util.Set.of(new NodeId("r0")) : java.util.Set.of());
        this.full = Math.floorMod(seed, FULL_ENCODE_EVERY) == 0;
        this.steps = steps;
        this.rng = new SplittableRandom(seed ^ 0x5DEECE66DL);
        ownerOfSize.add(null);
    }

    private record Ev(long at, long seq, int code, Runnable task) implements Comparable<Ev> {
        @Override
        public int compareTo(Ev o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private void at(long atNanos, int code, Runnable task) {
        queue.add(new Ev(Math.max(atNanos, now), seq++, code, task));
    }

    /** Prints every frame and stream end (the replay command's {@code --trace}); off in campaigns. */
    static boolean verbose;

    private void log(String what) {
        if (verbose) {
            System.out.printf("%9.3fms %s%n", now / 1e6, what);
        }
    }

    /**
     * A violation found inside a call of the production core (the receiver's oracles): recorded before it is thrown,
     * because the core turns any exception of a step into an INTERNAL refusal of the stream; the event loop rethrows it.
     */
    private Violation raised;

    private Violation violation(String oracle, String detail) {
        Violation v = new Violation(oracle, detail);
        if (raised == null) {
            raised = v;
        }
        return v;
    }

    private void fold(long v) {
        trace = (trace ^ v) * 0x100000001b3L;
    }

    private boolean bug(SimBug b) {
        return bug == b;
    }

    private void execute() {
        Step cast = steps.getFirst();
        sources = new SrcNode[cast.src()];
        requesters = new ReqNode[cast.req()];
        for (int i = 0; i < sources.length; i++) {
            sources[i] = new SrcNode(i);
            sources[i].incarnate();
        }
        for (int j = 0; j < requesters.length; j++) {
            requesters[j] = new ReqNode(j, rng.nextInt(3) == 0 ? Scope.of(List.of(NS[0])) : Scope.all());
        }
        for (ReqNode q : requesters) {
            for (SrcNode s : sources) {
                q.learn(s.index, s.cur == null ? null : s.cur.id);
            }
        }
        long last = 0;
        for (int i = 1; i < steps.size(); i++) {
            Step st = steps.get(i);
            last = Math.max(last, st.atMs());
            at(st.atMs() * MS, 1000 + st.kind().ordinal(), () -> apply(st));
        }
        long healAt = (last + 50) * MS;
        at(healAt, 2, this::heal);
        long end = healAt + SETTLE_MS * MS;
        while (!queue.isEmpty() && queue.peek().at <= end && !settled) {
            Ev e = queue.poll();
            now = e.at;
            fold(e.at);
            fold(e.code);
            if (++events > EVENTS_MAX) {
                throw new Violation("bounded", "more than " + EVENTS_MAX + " events");
            }
            e.task.run();
            if (raised != null) {
                throw raised;
            }
        }
        now = end;
        checkConvergence();
    }

    private long delay() {
        long ms = rng.nextInt(10) == 0 ? 10 + rng.nextInt(60) : rng.nextInt(4);
        return ms * MS + rng.nextInt(1000);
    }

    private UUID uuid() {
        return new UUID(rng.nextLong(), rng.nextLong());
    }

    // ---------------------------------------------------------------- the schedule's steps

    private void apply(Step st) {
        log("step " + st);
        SrcNode s = sources[st.src()];
        ReqNode q = requesters[st.req()];
        Link link = q.links[s.index];
        switch (st.kind()) {
            case PUT -> {
                s.put(st.arg() % SLOTS);
                if (st.arg() % 3 == 0) {
                    q.barrier(s); // an explicit barrier (FlushThrough) through the head: ROUTE-10 raises that session
                }
            }
            case DELETE -> s.delete(st.arg() % SLOTS);
            case BURST -> {
                for (int i = 0; i < 4 + st.arg() % 16; i++) {
                    int slot = rng.nextInt(SLOTS);
                    if (rng.nextInt(3) == 0) {
                        s.delete(slot);
                    } else {
                        s.put(slot);
                    }
                }
                if (st.arg() % 2 == 0) {
                    q.barrier(s);
                }
            }
            case RESET -> {
                q.reset(q.slots[s.index]);
            }
            case RESTART -> s.restart(true);
            case LEAVE -> {
                s.leave();
                at(now + (100 + st.arg()) * MS, 5, () -> s.restart(true));
            }
            case FENCE -> s.restart(false);
            case SUSPEND -> {
                s.suspended = true;
                at(now + (50 + 4L * st.arg()) * MS, 6, () -> s.suspended = false);
            }
            case PARTITION -> {
                link.partitioned = true;
                at(now + (50 + 4L * st.arg()) * MS, 7, () -> link.partitioned = false);
            }
            case LOSSY -> link.lossy = !link.lossy;
            case DUPLICATE -> link.duplicating = !link.duplicating;
            case SLOW -> link.slow = !link.slow;
            case STARVE -> {
                q.starved = true;
                at(now + (20 + 2L * st.arg()) * MS, 8, () -> q.starved = false);
            }
            case CORRUPT -> link.corruptNext = true;
            case FORGE -> link.forgeNext = true;
            case JOIN -> throw new IllegalStateException("JOIN is step 0 only");
        }
    }

    private void heal() {
        healed = true;
        at(now + 10 * MS, 16, this::settleCheck);
        for (SrcNode s : sources) {
            s.suspended = false;
            if (s.cur == null) {
                s.restart(true);
            }
        }
        for (ReqNode q : requesters) {
            q.starved = false;
            for (Link l : q.links) {
                l.partitioned = l.lossy = l.duplicating = l.slow = l.corruptNext = l.forgeNext = false;
            }
        }
    }

    /** After healing: stop early once converged and quiet (nothing more can happen but liveness). */
    private void settleCheck() {
        boolean quiet = true;
        for (ReqNode q : requesters) {
            for (SrcNode s : sources) {
                Slot slot = q.slots[s.index];
                Installed v = slot.installed;
                Stream st = slot.stream;
                SrcSession ss = st == null ? null : st.session;
                quiet &= s.cur != null && v != null && v.inc.equals(s.cur.id) && v.cursor == s.cur.head() && st != null
                        && slot.core != null && slot.core.state() instanceof RequesterState.Streaming
                        && slot.core.currentStream().equals(Optional.of(st.id)) && st.rx.queue.isEmpty() && ss != null
                        && !ss.closed() && ss.core.pump.idle() && ss.core.ledger().outstandingBytes() == 0;
            }
        }
        if (quiet) {
            settled = true;
        } else {
            at(now + 10 * MS, 16, this::settleCheck);
        }
    }

    // ---------------------------------------------------------------- network

    /** The path between one requester and one source; faults are per path, ordering is per stream. */
    static final class Link {
        boolean partitioned;
        boolean lossy;
        boolean duplicating;
        boolean slow;
        boolean corruptNext;
        boolean forgeNext;
    }

    enum MKind { OPEN_ACCEPTED, BEGIN, PAGE, DELTA, COMMIT, LIVENESS, ERROR, OPEN, ACK, CANCEL, REGEN, END, FLUSH }

    /** A frame (or transport signal) in flight: a source frame as the production core encoded it, or a requester frame. */
    static final class Msg {
        final MKind kind;
        long frame;
        long a;
        long bytes;
        /** A source frame as the requester's transport hands it to its core (decoded once, when sent). */
        Inbound<SourceFrame> inbound;
        /** A requester frame as its core handed it out. */
        RequesterFrame req;
        /** A source frame's encoded bytes. */
        byte[] raw;
        /** Counted in the requester's unconsumed credit (its first arrival; copies are set false by copy()). */
        boolean counted;

        Msg(MKind kind) {
            this.kind = kind;
        }

        boolean data() {
            return kind == MKind.BEGIN || kind == MKind.PAGE || kind == MKind.DELTA || kind == MKind.COMMIT;
        }

        Msg copy() {
            Msg m = new Msg(kind);
            m.frame = frame;
            m.a = a;
            m.bytes = bytes;
            m.inbound = inbound;
            m.req = req;
            m.raw = raw;
            return m;
        }

        /** A requester frame as the core handed it out. */
        static Msg from(RequesterFrame f) {
            Msg m = new Msg(switch (f.getBodyCase()) {
                case OPEN -> MKind.OPEN;
                case ACK -> MKind.ACK;
                case RESUME_FROM, NEED_REPAIR -> MKind.REGEN;
                case FLUSH_THROUGH -> MKind.FLUSH;
                default -> throw new IllegalStateException("the simulated requester sends " + f.getBodyCase());
            });
            m.req = f;
            m.a = f.hasAck() ? f.getAck().getConsumedThroughFrame() : 0;
            return m;
        }

        /**
         * A source frame as the production {@link SourceCore} encoded it (pages and deltas through SourceFrameEncoder,
         * control frames through protobuf), decoded as the requester's transport does: {@code SourceFrameDecoder} for
         * pages and deltas, the generated parser for the rest (issue 38 item 3: the real codec on every frame).
         */
        static Msg fromSource(byte[] bytes, SourceFrame.BodyCase body) {
            Msg m = new Msg(switch (body) {
                case ACCEPTED -> MKind.OPEN_ACCEPTED;
                case SNAPSHOT_BEGIN -> MKind.BEGIN;
                case SNAPSHOT_PAGE -> MKind.PAGE;
                case DELTA -> MKind.DELTA;
                case SNAPSHOT_COMMIT -> MKind.COMMIT;
                case LIVENESS -> MKind.LIVENESS;
                case ERROR -> MKind.ERROR;
                default -> throw new IllegalStateException("a source sends " + body);
            });
            m.bytes = bytes.length;
            m.raw = bytes;
            m.inbound = decode(bytes);
            m.frame = switch (m.inbound) {
                case Inbound.Read r -> r.frame().header().getFrameNumber();
                case Inbound.Parsed<SourceFrame> p -> p.message().getFrameNumber();
                default -> throw new IllegalStateException("the source encoded an undecodable " + body + " frame: " + m.inbound);
            };
            return m;
        }

        /** The generated form of this source frame (for byzantine edits and error oracles). */
        SourceFrame message() {
            return switch (inbound) {
                case Inbound.Parsed<SourceFrame> p -> p.message();
                default -> throw new IllegalStateException("not a control frame: " + kind);
            };
        }

        Inbound<SourceFrame> toInbound() {
            return inbound;
        }

        private static Inbound<SourceFrame> decode(byte[] bytes) {
            if (bytes.length > SESSION.frameEncodedBytesMax()) {
                return new Inbound.Oversized<>(bytes.length, SESSION.frameEncodedBytesMax());
            }
            return switch (SourceFrameDecoder.decode(bytes, SESSION.frameDecodedBytesMax())) {
                case SourceFrameDecoder.Result.Read r -> new Inbound.Read(r, bytes.length);
                case SourceFrameDecoder.Result.UseGenerated g -> {
                    try {
                        yield new Inbound.Parsed<>(SourceFrame.parseFrom(bytes), bytes.length);
                    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                        yield new Inbound.Unparseable<>(e.getMessage());
                    }
                }
            };
        }
    }

    /** One bidirectional stream (a gRPC call): FIFO each way, whatever the per-message delay. */
    final class Stream {
        final UUID id;
        final SrcNode src;
        final ReqNode req;
        final Link link;
        long lastToReq;
        long lastToSrc;
        Rx rx;
        SrcSession session;

        Stream(UUID id, SrcNode src, ReqNode req) {
            this.id = id;
            this.src = src;
            this.req = req;
            this.link = req.links[src.index];
        }

        void toRequester(Msg m) {
            fold(m.kind.ordinal() * 31L + m.frame);
            if (verbose) {
                log("s" + src.index + "->r" + req.index + " " + id.toString().substring(0, 8) + " #" + m.frame + " " + m.kind + " "
                        + m.bytes + "B" + (m.kind == MKind.PAGE || m.kind == MKind.DELTA ? "" : " " + m.message().toString().replace('\n', ' ')));
            }
            if (!transit(m)) {
                return;
            }
            long t = Math.max(now + delay() + (link.slow ? 50 * MS + rng.nextInt(150) * MS : 0), lastToReq);
            lastToReq = t;
            at(t, 20 + m.kind.ordinal(), () -> req.receive(this, m));
            if (link.duplicating && rng.nextInt(4) == 0) {
                Msg d = m.copy();
                at(t, 40, () -> req.receive(this, d));
            }
        }

        /** The source half-closed: the requester's transport sees the end after every frame sent before it. */
        void endToRequester() {
            if (link.partitioned) {
                return; // the requester learns from silence or a later break
            }
            long t = Math.max(now + delay(), lastToReq);
            lastToReq = t;
            at(t, 18, () -> req.ended(this));
        }

        void toSource(Msg m) {
            fold(m.kind.ordinal() * 37L + m.a);
            if (m.kind != MKind.CANCEL && !transit(m)) {
                // One stream is one TCP connection: a request frame is never lost alone; the connection breaks, and
                // both ends learn it (a lost ACK would otherwise strand the source's credit while liveness flows).
                at(now + delay() + 20 * MS, 17, () -> {
                    if (session != null) {
                        session.close("connection lost", false);
                    }
                    req.broken(this);
                });
                return;
            }
            long t = Math.max(now + delay(), lastToSrc);
            lastToSrc = t;
            at(t, 60 + m.kind.ordinal(), () -> src.receive(this, m));
        }

        private boolean transit(Msg m) {
            if (link.partitioned) {
                return false;
            }
            return !(link.lossy && rng.nextInt(6) == 0);
        }
    }

    // ---------------------------------------------------------------- sources

    /** One source incarnation: the real inventory and the oracle's record of what it published. */
    final class SrcInc {
        final Incarnation id;
        final InventorySource inventory = InventorySource.create(INVENTORY, () -> now);
        /** The resident map (slot → put size, 0 = absent) after each sequence: index = sequence. */
        final ArrayList<long[]> mapAt = new ArrayList<>();
        final ArrayDeque<UUID> committedViews = new ArrayDeque<>();

        SrcInc(Incarnation id) {
            this.id = id;
            mapAt.add(new long[SLOTS]);
        }

        long head() {
            return mapAt.size() - 1;
        }

        void published(MutationResult r, int slot, long value) {
            if (r instanceof MutationResult.Recorded rec) {
                if (rec.record().sequence() != mapAt.size()) {
                    throw new Violation("ordered", "source sequence " + rec.record().sequence() + " after " + head());
                }
                long[] next = mapAt.getLast().clone();
                next[slot] = value;
                mapAt.add(next);
            }
        }
    }

    final class SrcNode {
        final int index;
        final NodeId node;
        long epoch;
        SrcInc cur;
        boolean suspended;
        final ArrayList<SrcSession> sessions = new ArrayList<>();
        /** Shared by this node's sessions, as a SessionServer's sessions share theirs. */
        final SourceCounters counters = new SourceCounters();
        /** This source's shared send scheduling (ROUTE-10): the production scheduler, one permit. */
        final SendScheduler<SrcSession> sends = new SendScheduler<>(SEND_PERMITS, SESSIONS_PER_SOURCE_MAX,
                sourceConfig.sendPriority());

        /** A session has send work: it runs now, or waits in the scheduler; the bound is an oracle. */
        void askStep(SrcSession s) {
            if (s.running) {
                s.again = true; // asks again when its step ends
                return;
            }
            switch (sends.request(s, s.core.sendPriority())) {
                case SendScheduler.Admission.Granted g -> grant(s);
                case SendScheduler.Admission.Queued q -> { }
                case SendScheduler.Admission.Refused r -> throw violation("bounded", "send queue: " + r.detail());
            }
        }

        /** The scheduler granted {@code s} a step: it holds the permit from now and runs as the next event. */
        void grant(SrcSession s) {
            if (sourceConfig.sendPriority() && s.core.sendPriority() != SendPriority.NORMAL && sends.queuedCount() > 0) {
                outranked++;
            }
            s.running = true;
            at(now, 12, s::runStep);
        }

        /** A step's permit returns: the scheduler's next sessions run, then the session asks again if woken meanwhile. */
        void stepEnded(SrcSession s) {
            s.running = false;
            sends.release(s).forEach(this::grant);
            if (s.again) {
                s.again = false;
                s.pumpScheduled = false;
                s.wake();
            }
        }

        SrcNode(int index) {
            this.index = index;
            this.node = new NodeId("s" + index);
        }

        void incarnate() {
            cur = new SrcInc(new Incarnation(node, new NodeEpoch(++epoch), uuid()));
            incarnations.add(cur);
        }

        void put(int slot) {
            if (cur == null || healed) {
                return;
            }
            long size = ownerOfSize.size();
            ownerOfSize.add(cur);
            cur.published(cur.inventory.put(KEY[slot >> 1], Medium.values()[slot & 1], size), slot, size);
            appended();
        }

        void delete(int slot) {
            if (cur == null || healed) {
                return;
            }
            cur.published(cur.inventory.delete(KEY[slot >> 1], Medium.values()[slot & 1]), slot, 0);
            appended();
        }

        /**
         * The journal ran its armed wake-ups (DELTA-14); they only mark their session, which is woken here in this
         * node's session order: the journal keeps them in an identity map, whose order differs from run to run.
         */
        private void appended() {
            for (SrcSession s : sessions) {
                if (s.appendRaised) {
                    s.appendRaised = false;
                    s.wake();
                }
            }
        }

        /** The process ends: its streams break (the requester learns after a transport delay). */
        void leave() {
            for (SrcSession s : List.copyOf(sessions)) {
                s.close("process ended", false);
                Stream st = s.stream;
                at(now + delay() + 20 * MS, 9, () -> st.req.broken(st));
            }
            cur = null;
            for (ReqNode q : requesters) {
                q.propagate(index, null);
            }
        }

        /** A new incarnation (restart, or rejoin after a fence); {@code quick} restarts at once. */
        void restart(boolean quick) {
            leave();
            if (quick) {
                up();
            } else {
                at(now + 200 * MS, 10, this::up);
            }
        }

        private void up() {
            if (cur != null) {
                return;
            }
            incarnate();
            for (ReqNode q : requesters) {
                q.propagate(index, cur.id);
            }
        }

        MembershipView view() {
            return new SimView(!suspended);
        }

        /** A requester frame reaches the source's transport: the stream's production core takes it. */
        void receive(Stream st, Msg m) {
            SrcSession s = st.session;
            switch (m.kind) {
                case OPEN -> {
                    if (cur == null) {
                        at(now + delay(), 11, () -> st.req.broken(st)); // connection refused
                        return;
                    }
                    s = new SrcSession(this, cur, st);
                    st.session = s;
                    s.receive(m);
                }
                case CANCEL -> {
                    if (s != null) {
                        s.close("cancelled", false);
                    }
                }
                case ACK, REGEN, FLUSH -> {
                    if (s != null && !s.closed()) {
                        s.receive(m);
                    }
                }
                default -> throw new IllegalStateException("a source receives " + m.kind);
            }
        }
    }

    private static final class AdmitAll implements MembershipView {
        @Override
        public ClusterIdentity cluster() {
            return CLUSTER;
        }

        @Override
        public long revision() {
            return 1;
        }

        @Override
        public boolean valid() {
            return true;
        }

        @Override
        public Collection<Member> members() {
            return List.of();
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return Optional.empty();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return true;
        }
    }

    /** The source's membership view: valid unless suspended; admits every current incarnation and requester. */
    private final class SimView implements MembershipView {
        private final boolean valid;

        SimView(boolean valid) {
            this.valid = valid;
        }

        @Override
        public ClusterIdentity cluster() {
            return CLUSTER;
        }

        @Override
        public long revision() {
            return 1;
        }

        @Override
        public boolean valid() {
            return valid;
        }

        @Override
        public Collection<Member> members() {
            List<Member> out = new ArrayList<>();
            Endpoint e = new Endpoint("127.0.0.1", 1);
            for (SrcNode s : sources) {
                if (s.cur != null) {
                    out.add(new Member(s.cur.id, e, e, ClusterIdentity.PROTOCOL));
                }
            }
            for (ReqNode q : requesters) {
                out.add(new Member(q.self, e, e, ClusterIdentity.PROTOCOL));
            }
            return out;
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return members().stream().filter(m -> m.nodeId().equals(nodeId)).findFirst();
        }

        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            if (!valid) {
                return false;
            }
            for (SrcNode s : sources) {
                if (s.cur != null && s.cur.id.equals(incarnation)) {
                    return true;
                }
            }
            for (ReqNode q : requesters) {
                if (q.self.equals(incarnation)) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * The source end of one stream: the production {@link SourceCore} (issue 38: the Open check, the receive checks,
     * the credit ledger, the snapshot and delta pump, liveness, close-with-error) on the real inventory; this class
     * is only its host (admission, committed views), its transport and its one timer.
     */
    final class SrcSession implements SourceCore.Host {
        final SrcNode node;
        final SrcInc inc;
        final Stream stream;
        final SourceCore core;
        private final Runnable appendWake = () -> appendRaised = true;
        /** The journal's wake-up ran; the node wakes the session in a deterministic order. */
        boolean appendRaised;
        /** Asked for a step (queued or granted) and not yet run. */
        boolean pumpScheduled;
        /** Holds its source's send permit (for {@link #STEP_HOLD_NANOS} after its step). */
        boolean running;
        /** Woken while running: asks again when the step's permit returns. */
        boolean again;
        private long timerAt = -1;

        SrcSession(SrcNode node, SrcInc inc, Stream stream) {
            this.node = node;
            this.inc = inc;
            this.stream = stream;
            this.core = new SourceCore(new SourceCore.Peer(CLUSTER, inc.id, sourceConfig, (SourceInventory) inc.inventory,
                    node.counters, node::view, Optional.empty(), ProtocolSimulator.this::uuid, rng), this);
            core.fault = bug.sourceFault;
        }

        boolean closed() {
            return core.state() instanceof SourceState.Closed;
        }

        @Override
        public ErrorCause stoppedCause() {
            return null;
        }

        /** SES-6: a new Open of this requester replaces its stream (SessionServer.admit); the bound is an oracle. */
        @Override
        public ErrorCause admit() {
            for (SrcSession old : List.copyOf(node.sessions)) {
                if (old.core.requester().equals(core.requester())) {
                    old.perform(old.core.fail(ErrorCause.SESSION_MISMATCH, "replaced by a newer session of the same requester"));
                }
            }
            if (node.sessions.size() >= SESSIONS_PER_SOURCE_MAX) {
                throw violation("bounded", "sessions per source above " + SESSIONS_PER_SOURCE_MAX);
            }
            node.sessions.add(this);
            return null;
        }

        @Override
        public void removed() {
            node.sessions.remove(this);
            if (!running) { // a running step returns its permit when its hold ends
                node.sends.cancel(this).forEach(node::grant);
            }
        }

        @Override
        public boolean isCommittedView(UUID viewId) {
            return inc.committedViews.contains(viewId);
        }

        @Override
        public void committed(UUID viewId) {
            inc.committedViews.addLast(viewId);
            committerOf.put(viewId, inc);
            if (inc.committedViews.size() > COMMITTED_VIEWS_MAX) {
                inc.committedViews.removeFirst();
            }
        }

        @Override
        public Runnable appendWake() {
            return appendWake;
        }

        /**
         * The shell's wake signal: the session asks its source's scheduler for a step (ROUTE-10); a session already
         * waiting only takes its current class (a barrier may have raised it).
         */
        void wake() {
            if (closed()) {
                return;
            }
            if (!pumpScheduled) {
                pumpScheduled = true;
                node.askStep(this);
            } else if (node.sends.isQueued(this)) {
                node.sends.request(this, core.sendPriority());
            }
        }

        /** A granted step: the production pump, ending early when a session of a higher class waits (ROUTE-10). */
        void runStep() {
            pumpScheduled = false;
            perform(core.pump(now, () -> {
                boolean y = node.sends.shouldYield(this);
                outranked += y ? 1 : 0;
                return y;
            }));
            at(now + STEP_HOLD_NANOS, 19, () -> node.stepEnded(this));
        }

        void receive(Msg m) {
            RequesterFrame f = m.req;
            if (full) { // a sample of schedules serializes and parses requester frames too
                try {
                    f = RequesterFrame.parseFrom(f.toByteArray());
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new IllegalStateException(e);
                }
            }
            perform(core.onFrame(now, new Inbound.Parsed<>(f, f.getSerializedSize())));
        }

        /** The stream ended under the source (a cancel, a lost connection, the process): nothing more is said on it. */
        void close(String reason, boolean tell) {
            List<SourceCore.Effect> effects = core.closeQuietly(reason);
            if (tell) {
                perform(effects);
            }
        }

        /** Carries out the core's effects: frames to the requester (through the byzantine link faults), the end, wake-ups. */
        void perform(List<SourceCore.Effect> effects) {
            for (SourceCore.Effect e : effects) {
                switch (e) {
                    case SourceCore.Effect.Send s -> send(Msg.fromSource(s.frame().toByteArray(), s.frame().body()));
                    case SourceCore.Effect.Complete c -> stream.endToRequester();
                    case SourceCore.Effect.Wake w -> wake();
                    case SourceCore.Effect.Reached r -> { }
                }
            }
            long d = core.deadlineNanos();
            if (d != Long.MAX_VALUE && d != timerAt && !closed()) {
                timerAt = d;
                at(d, 3, () -> {
                    if (timerAt == d) {
                        timerAt = -1;
                        wake(); // through the scheduler, as the shell's pump thread
                    }
                });
            }
        }

        private void send(Msg m) {
            if (m.kind == MKind.ERROR) {
                errorOracle(m.message().getError().getCause(), m.message().getError().getDetail());
            }
            Link link = stream.link;
            if (link.corruptNext && m.kind == MKind.PAGE) {
                m = corrupted(m, link);
            } else if (link.forgeNext && m.kind == MKind.COMMIT) { // a byzantine marker: S1 claims more than was replayed
                link.forgeNext = false;
                SourceFrame f = m.message();
                m = refrom(f.toBuilder().setSnapshotCommit(f.getSnapshotCommit().toBuilder()
                        .setS1(f.getSnapshotCommit().getS1() + 1 + rng.nextInt(3))).build());
            }
            stream.toRequester(m);
        }

        /** A byzantine page: one staged put's size altered after the transcript took it (a later page if this one has none). */
        private Msg corrupted(Msg m, Link link) {
            SourceFrame f;
            try {
                f = SourceFrame.parseFrom(m.raw);
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                throw new IllegalStateException(e);
            }
            if (f.getSnapshotPage().getRecordsCount() == 0 || f.getSnapshotPage().getRecords(0).getOp() != RecordOp.RECORD_OP_PUT) {
                return m;
            }
            link.corruptNext = false;
            Record r0 = f.getSnapshotPage().getRecords(0);
            return refrom(f.toBuilder().setSnapshotPage(f.getSnapshotPage().toBuilder()
                    .setRecords(0, r0.toBuilder().setSizeBytes(r0.getSizeBytes() + 1_000_000))).build());
        }

        private static Msg refrom(SourceFrame f) {
            return Msg.fromSource(f.toByteArray(), f.getBodyCase());
        }

        /** A correct requester never makes the source refuse it with these causes: each is a violation. */
        private void errorOracle(ErrorCause cause, String detail) {
            switch (cause) {
                case INTERNAL -> throw violation("invariant", "source: " + detail);
                case FUTURE_ACK -> throw violation("credit", "source: " + detail);
                case MALFORMED_FRAME -> throw violation("ordered", "source: " + detail);
                case FRAME_TOO_LARGE -> throw violation("bounded", "source: " + detail);
                default -> { }
            }
        }
    }

    // ---------------------------------------------------------------- requesters

    /**
     * One requester: per source a {@link Slot} whose {@link RequesterCore} (the production core) makes every receive
     * decision; this class is only its transport (delivery, starvation, stream ends) and its timer.
     */
    final class ReqNode {
        final int index;
        final Incarnation self;
        final Scope scope;
        final ScopeDigest scopeDigest;
        final Link[] links;
        final Slot[] slots;
        final long[] learnAt;
        final SimReceiver receiver = new SimReceiver(this);
        /** Shared by this requester's cores, as a Subscriber's sessions share theirs. */
        final RequesterCounters counters = new RequesterCounters();
        boolean starved;

        ReqNode(int index, Scope scope) {
            this.index = index;
            this.self = new Incarnation(new NodeId("r" + index), new NodeEpoch(1), uuid());
            this.scope = scope;
            this.scopeDigest = scope.digest();
            this.links = new Link[sources.length];
            this.slots = new Slot[sources.length];
            this.learnAt = new long[sources.length];
            for (int i = 0; i < sources.length; i++) {
                links[i] = new Link();
                slots[i] = new Slot(i);
            }
        }

        /** Membership reaches this requester after a delay (watch lag). */
        void propagate(int src, Incarnation inc) {
            long t = Math.max(now + rng.nextInt(150) * MS, learnAt[src]); // a watch delivers in revision order
            learnAt[src] = t;
            at(t, 13, () -> learn(src, inc));
        }

        /** A new source incarnation gets a new core, as the Subscriber makes a new RequesterSession (SES-6). */
        void learn(int src, Incarnation inc) {
            Slot slot = slots[src];
            if (inc == null ? slot.inc == null : inc.equals(slot.inc)) {
                return;
            }
            if (slot.core != null) {
                RequesterCore old = slot.core;
                perform(slot, old, old.stop(ErrorCause.UNKNOWN_SOURCE_INCARNATION, ResetCause.MEMBER_REMOVED));
            }
            slot.inc = inc;
            slot.installed = null;
            slot.staging = null;
            slot.lastCursor = -1;
            slot.core = null;
            slot.timerAt = -1;
            if (inc != null) {
                slot.core = new RequesterCore(new RequesterCore.Peer(CLUSTER, self, inc, scope, SESSION, receiver,
                        counters, () -> VIEW_OF_REQUESTERS));
                slot.core.fault = bug.fault;
                scheduleConnect(slot);
            }
        }

        /** An explicit barrier: asks source {@code s} to expose everything through its head (PUB-4; ROUTE-10 raises it). */
        void barrier(SrcNode s) {
            Slot slot = slots[s.index];
            if (slot.core != null && s.cur != null && s.cur.id.equals(slot.inc)) {
                perform(slot, slot.core, slot.core.flushThrough(s.cur.head()));
            }
        }

        void scheduleConnect(Slot slot) {
            if (!slot.connectScheduled) {
                slot.connectScheduled = true;
                at(now + (5 + rng.nextInt(30)) * MS, 14, () -> connect(slot));
            }
        }

        void connect(Slot slot) {
            slot.connectScheduled = false;
            if (slot.core == null || !(slot.core.state() instanceof RequesterState.Idle || slot.core.state() instanceof RequesterState.BackingOff)) {
                return;
            }
            Stream st = new Stream(uuid(), sources[slot.src], this);
            st.rx = new Rx(st, slot.core);
            slot.stream = st;
            perform(slot, slot.core, slot.core.connect(now, st.id, receiver.installedCursor(slot.inc), true));
        }

        /** Carries out a core's effects: frames to the source, stream ends, the connect loop, the core's timer. */
        void perform(Slot slot, RequesterCore core, List<RequesterCore.Effect> effects) {
            for (RequesterCore.Effect e : effects) {
                Stream st = slot.stream;
                switch (e) {
                    case RequesterCore.Effect.Send s -> {
                        if (st != null && st.id.equals(s.stream())) {
                            st.toSource(Msg.from(s.frame()));
                        }
                    }
                    case RequesterCore.Effect.Close c -> {
                        if (c.error().isPresent() && c.error().get().cause() == ErrorCause.INTERNAL) {
                            if (raised != null) {
                                throw raised;
                            }
                            throw violation("invariant", c.error().get().detail()); // a production class refused an edge
                        }
                        fold(c.error().map(r -> r.cause().ordinal() + 1).orElse(0));
                        log("r" + index + " closes " + c.stream().toString().substring(0, 8) + ": " + c.error());
                        cancel(st, c.stream());
                    }
                    case RequesterCore.Effect.Abandon a -> {
                        log("r" + index + " abandons " + a.stream().toString().substring(0, 8) + ": " + a.detail());
                        cancel(st, a.stream());
                    }
                    case RequesterCore.Effect.Ended en -> {
                        if (core == slot.core) {
                            scheduleConnect(slot);
                        }
                    }
                }
            }
            armTimer(slot, core);
        }

        private void cancel(Stream st, UUID stream) {
            if (st != null && st.id.equals(stream)) {
                st.toSource(new Msg(MKind.CANCEL));
            }
        }

        /** The core's one timer: an event at its deadline; a stale event (the deadline moved) re-arms without effect. */
        void armTimer(Slot slot, RequesterCore core) {
            long d = core.deadlineNanos();
            if (core != slot.core || d == Long.MAX_VALUE || d == slot.timerAt) {
                return;
            }
            slot.timerAt = d;
            at(d, 4, () -> {
                if (slot.core == core && slot.timerAt == d) {
                    slot.timerAt = -1;
                    perform(slot, core, core.onTimer(now));
                }
            });
        }

        /** The source half-closed the stream: the end reaches the core after every message that arrived before it. */
        void ended(Stream st) {
            receive(st, new Msg(MKind.END));
        }

        /** The transport reports the stream broken (the source's process ended, a connection refused). */
        void broken(Stream st) {
            Slot slot = slots[st.src.index];
            if (st.rx != null && st.rx.core == slot.core) {
                perform(slot, slot.core, slot.core.onStreamEnd(st.id, Optional.of("TRANSPORT_UNAVAILABLE")));
            }
        }

        /** A connection reset: both ends see the stream end. */
        void reset(Slot slot) {
            Stream st = slot.stream;
            if (st != null && slot.core != null) {
                st.toSource(new Msg(MKind.CANCEL));
                perform(slot, slot.core, slot.core.onStreamEnd(st.id, Optional.of("TRANSPORT_CANCELLED")));
            }
        }

        /** A message arrives at the transport: the core hears of its bytes at once (the stream tracer), of it when applied. */
        void receive(Stream st, Msg m) {
            Rx rx = st.rx;
            Slot slot = slots[st.src.index];
            rx.core.noteArrival(st.id, now);
            if (m.data() && rx.core == slot.core && slot.stream == st && m.frame > rx.highestArrived) {
                rx.highestArrived = m.frame; // a copy the network duplicated is not the source's: only first arrivals count
                m.counted = true;
                rx.bufferedBytes += m.bytes;
                rx.bufferedFrames++;
                if (rx.bufferedBytes > WINDOW_BYTES || rx.bufferedFrames > WINDOW_FRAMES) {
                    throw violation("credit", "requester holds " + rx.bufferedFrames + " unconsumed frames of "
                            + rx.bufferedBytes + " bytes, window " + WINDOW_FRAMES + " frames of " + WINDOW_BYTES + " bytes");
                }
            }
            rx.queue.add(m);
            scheduleApply(slot, rx);
        }

        void scheduleApply(Slot slot, Rx rx) {
            if (!rx.applyScheduled && !rx.queue.isEmpty()) {
                rx.applyScheduled = true;
                long d = starved ? (30 + rng.nextInt(70)) * MS : rng.nextInt(2) * MS;
                at(now + d, 15, () -> applyNext(slot, rx));
            }
        }

        /** Hands the next message to the core (gRPC's onNext): the core checks, applies and acknowledges it. */
        void applyNext(Slot slot, Rx rx) {
            rx.applyScheduled = false;
            Msg m = rx.queue.pollFirst();
            if (m == null) {
                return;
            }
            if (m.counted) {
                rx.bufferedBytes -= m.bytes;
                rx.bufferedFrames--;
            }
            if (m.kind == MKind.END) {
                perform(slot, rx.core, rx.core.onStreamEnd(rx.stream.id, Optional.empty()));
                scheduleApply(slot, rx);
                return;
            }
            List<RequesterCore.Effect> effects = rx.core.onFrame(rx.stream.id, now, m.toInbound());
            creditFollowsApplication(m, effects);
            perform(slot, rx.core, effects);
            scheduleApply(slot, rx);
        }

        /** SES-13, DELTA-12: an ACK never covers a frame the requester refused (it was never applied). */
        private void creditFollowsApplication(Msg m, List<RequesterCore.Effect> effects) {
            boolean refused = effects.stream().anyMatch(e -> e instanceof RequesterCore.Effect.Close c && c.error().isPresent());
            for (RequesterCore.Effect e : effects) {
                if (refused && e instanceof RequesterCore.Effect.Send s && s.frame().hasAck()
                        && s.frame().getAck().getConsumedThroughFrame() >= m.frame) {
                    throw violation("credit", "ACK of frame " + s.frame().getAck().getConsumedThroughFrame()
                            + " returned the credit of frame " + m.frame + ", which the requester refused");
                }
            }
        }

        /** The per-step oracles on an installed view: coverage, atomicity, stale incarnation, order. */
        void check(Slot slot, Installed v) {
            SrcInc inc = incarnation(v.inc);
            if (committerOf.get(v.view) != inc) {
                throw violation("stale incarnation", "view " + v.view + " of " + committerOf.get(v.view).id
                        + " is installed as a view of " + v.inc);
            }
            if (v.cursor > inc.head()) {
                throw violation("coverage", "view claims cursor " + v.cursor + " beyond the source head " + inc.head());
            }
            long[] expect = inc.mapAt.get((int) v.cursor);
            for (int i = 0; i < SLOTS; i++) {
                long want = scope.contains(NS[i / (KEYS * 2)]) ? expect[i] : 0;
                if (v.map[i] != want) {
                    if (v.map[i] != 0 && v.map[i] < ownerOfSize.size() && ownerOfSize.get((int) v.map[i]) != inc) {
                        throw violation("stale incarnation", "view of " + v.inc + " holds a record of another incarnation");
                    }
                    throw violation("atomic", "view at cursor " + v.cursor + " differs from the source in slot " + i
                            + ": " + v.map[i] + " != " + want);
                }
            }
            if (v.inc.equals(slot.lastInc) && v.cursor < slot.lastCursor) {
                throw violation("ordered", "installed cursor went back from " + slot.lastCursor + " to " + v.cursor);
            }
            slot.lastInc = v.inc;
            slot.lastCursor = v.cursor;
        }
    }

    /**
     * The requester's view receiver in the simulator: the hidden staging view, the installed view and the commit
     * checks of {@code orbitkv.index}'s GlobalIndex restated on a slot map (SNAP-5..SNAP-7, DELTA-7..DELTA-9). The
     * GlobalIndex itself can not run here: {@code orbitkv.index} depends on this module, so this module's tests can
     * not depend on it (a reactor cycle); the index's own tests cover its staging and install. This model is the
     * independent oracle of what a receiver must do, and carries the two seeded receiver bugs.
     */
    final class SimReceiver implements ViewReceiver {
        private final ReqNode node;

        SimReceiver(ReqNode node) {
            this.node = node;
        }

        private Slot slotOf(Incarnation source) {
            for (Slot s : node.slots) {
                if (source.equals(s.inc)) {
                    return s;
                }
            }
            throw violation("stale incarnation", "a core of " + source + " reached the receiver after it was replaced");
        }

        /** The "unique" oracle: a data frame reaches the receiver once per stream, in order (SES-12). */
        private void unique(Slot slot, long frame) {
            UUID stream = slot.core.currentStream().orElse(null);
            if (stream != null && stream.equals(slot.lastStream) && frame <= slot.lastFrame) {
                throw violation("unique", "frame " + frame + " applied after frame " + slot.lastFrame + " on stream " + stream);
            }
            slot.lastStream = stream;
            slot.lastFrame = frame;
        }

        @Override
        public StageOutcome beginStaging(Incarnation source, UUID viewId, ScopeDigest digest, long s0, long frame) {
            Slot slot = slotOf(source);
            unique(slot, frame);
            if (!digest.equals(node.scopeDigest)) {
                return new StageOutcome.Rejected(RejectReason.SCOPE_DIGEST_MISMATCH);
            }
            slot.staging = new Staging(viewId, s0, TranscriptDigest.builder().begin(frame, viewId, digest, s0));
            return new StageOutcome.Staged(0);
        }

        @Override
        public StageOutcome stagePage(Incarnation source, UUID viewId, long ordinal, long frame, RecordBatch records) {
            Slot slot = slotOf(source);
            unique(slot, frame);
            Staging sg = slot.staging;
            if (sg == null || !sg.view.equals(viewId)) {
                return new StageOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
            }
            for (ResidenceRecord r : records.asList()) {
                sg.map[slot(r)] = r.sizeBytes();
            }
            sg.pages++;
            sg.transcript.page(frame, ordinal, records);
            return new StageOutcome.Staged(records.size());
        }

        @Override
        public DeltaOutcome applyDelta(Incarnation source, UUID viewId, long frame, Interval interval, RecordBatch records) {
            Slot slot = slotOf(source);
            unique(slot, frame);
            Staging sg = slot.staging;
            if (sg != null && sg.view.equals(viewId)) {
                if (interval.from() != sg.replay) {
                    return new DeltaOutcome.Rejected(RejectReason.FRAME_OUT_OF_ORDER); // SNAP-7: replay is contiguous
                }
                applyRecords(sg.map, records.asList());
                sg.replay = interval.to();
                sg.transcript.replay(frame, interval, records);
                return new DeltaOutcome.Applied(interval.to());
            }
            Installed v = slot.installed;
            if (v == null || !v.view.equals(viewId)) {
                return new DeltaOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
            }
            if (interval.to() <= v.cursor) {
                return new DeltaOutcome.Duplicate(v.cursor); // DELTA-7
            }
            if (interval.from() != v.cursor) { // DELTA-8, DELTA-9
                return interval.from() < v.cursor ? new DeltaOutcome.ResumeFrom(v.cursor) : new DeltaOutcome.NeedRepair(v.cursor);
            }
            applyRecords(v.map, records.asList());
            v.cursor = interval.to();
            node.check(slot, v);
            return new DeltaOutcome.Applied(v.cursor);
        }

        @Override
        public CommitOutcome commit(Incarnation source, UUID viewId, CommitMarker m) {
            Slot slot = slotOf(source);
            Staging sg = slot.staging;
            if (sg == null || !sg.view.equals(viewId)) {
                return new CommitOutcome.Rejected(RejectReason.VIEW_UNKNOWN);
            }
            slot.staging = null; // installed or refused, the attempt ends (SNAP-7)
            boolean s1 = m.s1() == sg.replay || bug == SimBug.COMMIT_BEFORE_S1;
            boolean digest = m.transcriptDigest().equals(sg.transcript.finish()) || bug == SimBug.SKIP_DIGEST_CHECK;
            if (!s1 || m.pageCount() != sg.pages) {
                return new CommitOutcome.Rejected(RejectReason.COMMIT_INCOMPLETE);
            }
            if (!digest) {
                return new CommitOutcome.Rejected(RejectReason.TRANSCRIPT_DIGEST_MISMATCH);
            }
            Installed v = new Installed(viewId, m.s1(), sg.map, source);
            slot.installed = v;
            log("r" + node.index + " installs " + v.view.toString().substring(0, 8) + " at " + v.cursor);
            node.check(slot, v);
            return new CommitOutcome.Installed(viewId, m.s1(), 0);
        }

        @Override
        public void discardStaging(Incarnation source, ResetCause cause) {
            for (Slot s : node.slots) {
                if (source.equals(s.inc)) {
                    s.staging = null;
                }
            }
        }

        @Override
        public Optional<InstalledCursor> installedCursor(Incarnation source) {
            for (Slot s : node.slots) {
                if (source.equals(s.inc) && s.installed != null && s.installed.inc.equals(source)) {
                    return Optional.of(new InstalledCursor(s.installed.view, s.installed.cursor));
                }
            }
            return Optional.empty();
        }

        @Override
        public void observeLiveness(Incarnation source, long head) {
        }

        private void applyRecords(long[] map, List<ResidenceRecord> records) {
            for (ResidenceRecord r : records) {
                map[slot(r)] = r.isDelete() ? 0 : r.sizeBytes();
            }
        }
    }

    private SrcInc incarnation(Incarnation id) {
        for (SrcInc i : incarnations) {
            if (i.id.equals(id)) {
                return i;
            }
        }
        throw new IllegalStateException("unknown incarnation " + id);
    }

    private static int slot(ResidenceRecord r) {
        return ((r.key().namespace().bytes()[0] - 'a') * KEYS + r.key().key()[0]) * 2 + r.medium().ordinal();
    }

    private static RequesterState moved(RequesterState.Outcome o) {
        if (o instanceof RequesterState.Outcome.Moved m) {
            return m.to();
        }
        throw new IllegalStateException("expected a move, got " + o);
    }

    /** The requester's per-source state: one core per source incarnation (SES-6), the view the receiver holds. */
    static final class Slot {
        final int src;
        Incarnation inc;
        RequesterCore core;
        /** The stream of the core's last connect. */
        Stream stream;
        long timerAt = -1;
        Installed installed;
        Staging staging;
        boolean connectScheduled;
        Incarnation lastInc;
        long lastCursor = -1;
        /** The "unique" oracle: the stream and frame number of the last data frame the receiver took. */
        UUID lastStream;
        long lastFrame;

        Slot(int src) {
            this.src = src;
        }
    }

    /** The requester transport's side of one stream: messages arrived but not yet handed to the core. */
    static final class Rx {
        final Stream stream;
        final RequesterCore core;
        long bufferedBytes;
        int bufferedFrames;
        long highestArrived;
        boolean applyScheduled;
        final ArrayDeque<Msg> queue = new ArrayDeque<>();

        Rx(Stream stream, RequesterCore core) {
            this.stream = stream;
            this.core = core;
        }
    }

    /** A hidden staging view (SNAP-6). */
    static final class Staging {
        final UUID view;
        final long s0;
        long replay;
        long pages;
        final long[] map = new long[SLOTS];
        final TranscriptDigest.Builder transcript;

        Staging(UUID view, long s0, TranscriptDigest.Builder transcript) {
            this.view = view;
            this.s0 = s0;
            this.replay = s0;
            this.transcript = transcript;
        }
    }

    /** The installed view of one source incarnation at {@code cursor}. */
    static final class Installed {
        final UUID view;
        long cursor;
        final long[] map;
        final Incarnation inc;

        Installed(UUID view, long cursor, long[] map, Incarnation inc) {
            this.view = view;
            this.cursor = cursor;
            this.map = map;
            this.inc = inc;
        }
    }

    /** Convergence: after healing, every requester holds every admitted source's current map at its head. */
    private void checkConvergence() {
        for (ReqNode q : requesters) {
            for (SrcNode s : sources) {
                Slot slot = q.slots[s.index];
                if (s.cur == null) {
                    continue;
                }
                Installed v = slot.installed;
                if (v == null || !v.inc.equals(s.cur.id) || v.cursor != s.cur.head()) {
                    throw new Violation("convergence", "requester r" + q.index + " holds "
                            + (v == null ? "no view" : v.inc.epoch() + "@" + v.cursor) + " of s" + s.index + " at epoch "
                            + s.cur.id.epoch() + " head " + s.cur.head() + " (state " + (slot.core == null ? "none" : slot.core.state()) + ")");
                }
                q.check(slot, v);
            }
        }
    }

    // ---------------------------------------------------------------- shrinking and the command line

    /** The fewest steps of {@code seed}'s schedule that still fail with the same oracle (greedy, bounded). */
    static List<Step> shrink(long seed, SimBug bug, String violation) {
        return shrink(seed, bug, violation, ScheduleClass.MIXED);
    }

    static List<Step> shrink(long seed, SimBug bug, String violation, ScheduleClass cls) {
        String oracle = violation.substring(0, violation.indexOf(':') < 0 ? violation.length() : violation.indexOf(':'));
        List<Step> cur = new ArrayList<>(schedule(seed, cls));
        int budget = 400;
        for (int chunk = Math.max(1, (cur.size() - 1) / 2); chunk >= 1 && budget > 0; chunk /= 2) {
            for (int i = 1; i + chunk <= cur.size() && budget > 0; ) {
                List<Step> trial = new ArrayList<>(cur.subList(0, i));
                trial.addAll(cur.subList(i + chunk, cur.size()));
                budget--;
                Result r = run(seed, bug, trial);
                if (r.failed() && r.violation().startsWith(oracle)) {
                    cur = trial;
                } else {
                    i += chunk;
                }
            }
        }
        return cur;
    }

    /** The indexes of {@code kept} in {@code seed}'s full schedule (for the replay command). */
    static String indexes(long seed, List<Step> kept) {
        return indexes(seed, kept, ScheduleClass.MIXED);
    }

    static String indexes(long seed, List<Step> kept, ScheduleClass cls) {
        List<Step> all = schedule(seed, cls);
        StringBuilder b = new StringBuilder();
        for (Step s : kept) {
            int i = all.indexOf(s);
            if (i > 0) {
                b.append(b.isEmpty() ? "" : ",").append(i);
            }
        }
        return b.toString();
    }

    static List<Step> keep(long seed, String indexes, ScheduleClass cls) {
        List<Step> all = schedule(seed, cls);
        List<Step> out = new ArrayList<>();
        out.add(all.getFirst());
        if (!indexes.isEmpty()) {
            for (String s : indexes.split(",")) {
                out.add(all.get(Integer.parseInt(s)));
            }
        }
        return out;
    }

    /** A multi-threaded campaign: blocks of seeds handed to workers; the first violation is the lowest seed. */
    private static final class Campaign {
        static final long BLOCK = 1000;
        final long from;
        final long seeds;
        final ScheduleClass cls;
        final SimBug bug;
        final java.util.concurrent.atomic.AtomicLong next = new java.util.concurrent.atomic.AtomicLong();
        long violations;
        long events;
        long done;
        Result first;
        final long t0 = System.nanoTime();

        Campaign(long from, long seeds, ScheduleClass cls, SimBug bug) {
            this.from = from;
            this.seeds = seeds;
            this.cls = cls;
            this.bug = bug;
        }

        void work() {
            for (long block; (block = next.getAndAdd(BLOCK)) < seeds; ) {
                long v = 0;
                long ev = 0;
                Result f = null;
                long end = Math.min(seeds, block + BLOCK);
                for (long s = from + block; s < from + end; s++) {
                    Result r = run(s, bug, schedule(s, cls));
                    ev += r.events();
                    if (r.failed()) {
                        v++;
                        f = f == null ? r : f;
                    }
                }
                synchronized (this) {
                    violations += v;
                    events += ev;
                    if (f != null && (first == null || f.seed() < first.seed())) {
                        first = f;
                    }
                    long before = done;
                    done += end - block;
                    if (done / 100_000 != before / 100_000) {
                        double sec = (System.nanoTime() - t0) / 1e9;
                        System.out.printf("  %d seeds, %.1f s, %.0f seeds/s, %d violations%n", done, sec, done / sec, violations);
                    }
                }
            }
        }
    }

    /**
     * {@code --seeds N [--from S] [--bug NAME]}: runs N seeds, prints seeds/s and violations, and for the first
     * failure its seed, a one-line replay command and the shrunk schedule. {@code --seed S [--bug NAME]
     * [--steps i,j,k]} replays one seed (optionally only the listed schedule steps) and prints its trace hash.
     */
    public static void main(String[] args) {
        long seeds = 20_000;
        long from = 1;
        long one = -1;
        String stepsArg = null;
        SimBug b = SimBug.NONE;
        boolean stopAtFirst = false;
        ScheduleClass cls = ScheduleClass.MIXED;
        int threads = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seeds" -> seeds = Long.parseLong(args[++i]);
                case "--from" -> from = Long.parseLong(args[++i]);
                case "--seed" -> one = Long.parseLong(args[++i]);
                case "--steps" -> stepsArg = args[++i];
                case "--bug" -> b = SimBug.valueOf(args[++i]);
                case "--first" -> stopAtFirst = true;
                case "--trace" -> verbose = true;
                case "--class" -> cls = ScheduleClass.valueOf(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + "; usage: --seeds N [--from S] [--bug NAME] [--first] [--class C] [--threads T] | --seed S [--bug NAME] [--class C] [--steps i,j,k] [--trace]");
            }
        }
        if (one >= 0) {
            List<Step> steps = stepsArg == null ? schedule(one, cls) : keep(one, stepsArg, cls);
            Result r = run(one, b, steps);
            System.out.printf("seed %d bug %s steps %d events %d trace %016x %s%n", one, b, steps.size(), r.events(),
                    r.traceHash(), r.failed() ? "VIOLATION " + r.violation() : "ok");
            steps.forEach(s -> System.out.println("  " + s));
            System.exit(r.failed() ? 1 : 0);
        }
        long t0 = System.nanoTime(); // wall time of the campaign only; the simulation itself runs on virtual time
        long violations = 0;
        Result first = null;
        long events = 0;
        if (threads > 1) { // independent runs on worker threads; each run is single-threaded and a function of its seed
            Campaign c = new Campaign(from, seeds, cls, b);
            List<Thread> workers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                workers.add(Thread.ofPlatform().name("simulate-" + i).start(c::work));
            }
            for (Thread w : workers) {
                try {
                    w.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            violations = c.violations;
            first = c.first;
            events = c.events;
        }
        for (long s = from; threads == 1 && s < from + seeds; s++) {
            Result r = run(s, b, schedule(s, cls));
            events += r.events();
            if (r.failed()) {
                violations++;
                if (first == null) {
                    first = r;
                }
                if (stopAtFirst) {
                    seeds = s - from + 1;
                    break;
                }
            }
            if ((s - from + 1) % 100_000 == 0) {
                double sec = (System.nanoTime() - t0) / 1e9;
                System.out.printf("  %d seeds, %.1f s, %.0f seeds/s, %d violations%n", s - from + 1, sec, (s - from + 1) / sec, violations);
            }
        }
        double sec = (System.nanoTime() - t0) / 1e9;
        System.out.printf("simulated %d schedules (seeds %d..%d, class %s, bug %s) in %.1f s: %.0f seeds/s, %d events, %d violations%n",
                seeds, from, from + seeds - 1, cls, b, sec, seeds / sec, events, violations);
        if (first != null) {
            List<Step> shrunk = shrink(first.seed(), b, first.violation(), cls);
            String opts = (b == SimBug.NONE ? "" : " --bug " + b) + (cls == ScheduleClass.MIXED ? "" : " --class " + cls);
            System.out.printf("first violation: seed %d: %s%n", first.seed(), first.violation());
            System.out.printf("replay: scripts/simulate --seed %d%s%n", first.seed(), opts);
            System.out.printf("shrunk schedule (%d of %d steps): scripts/simulate --seed %d%s --steps %s%n", shrunk.size(),
                    first.steps(), first.seed(), opts, indexes(first.seed(), shrunk, cls));
            shrunk.forEach(s -> System.out.println("  " + s));
            System.exit(1);
        }
    }
}
