package orbitkv.conformance.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import orbitkv.index.Coverage;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.index.Replica;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.InstalledCursor;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RejectReason;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.Incarnation;
import orbitkv.testing.SeededTries;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Random frame streams against an independent model (DESIGN §10): each source is a journal of residency
 * mutations; its state at any sequence is recomputed from the journal, never taken from the code under
 * test. A sender plays snapshots (with mutations between pages), coalesced deltas, duplicates, overlaps,
 * gaps, lost frames, reconnects, member removal and re-admission, against a large or a tiny budget.
 *
 * <p>Invariants after every step: the installed view of each owner equals the model's source state at its
 * watermark (SNAP-5, SNAP-9, DELTA-2); an owner without an installed view contributes no rows (SNAP-11,
 * SNAP-12); coverage is never CompleteAtWatermarks while an admitted member lacks an installed view (IDX-7,
 * IDX-3); the budget is never exceeded (SNAP-12).
 */
@Tag("unit")
class GlobalIndexModelProperties {
    static final Namespace NS_A = Namespace.utf8("ns-a");
    static final Namespace NS_B = Namespace.utf8("ns-b");
    static final Scope SCOPE = Scope.of(List.of(NS_A, NS_B));
    static final Incarnation SELF = TestMembership.incarnation("self", 1, 1);
    static final List<StateKey> UNIVERSE = new ArrayList<>();

    static {
        for (int i = 0; i < 5; i++) {
            UNIVERSE.add(new StateKey(i % 2 == 0 ? NS_A : NS_B, ("key" + i).getBytes(StandardCharsets.UTF_8)));
        }
    }

    enum Kind { MUTATE, SEND, DUPLICATE, OVERLAP, GAP, LOSE, RECONNECT, BOOTSTRAP, REMOVE, READMIT, CLOCK }

    record Action(Kind kind, int owner, int a, int b) {
    }

    record Case(List<Action> actions, boolean tinyBudget) {}

    static Case draw(SeededTries.Gen g) {
        Kind[] kinds = Kind.values(); // weights in declaration order
        List<Action> actions = g.list(5, 40, x -> new Action(kinds[x.weighted(6, 6, 2, 2, 2, 2, 2, 3, 1, 1, 1)],
                x.intIn(0, 1), x.intIn(1, 6), x.intIn(0, 1_000_000)));
        return new Case(actions, g.bool());
    }

    @Test
    @DisplayName("SNAP-5 SNAP-9 SNAP-11 SNAP-12 DELTA-2 DELTA-7 DELTA-8 DELTA-9 IDX-3 IDX-7 IDX-13: installed view equals the model at its watermark (2,000 seeded tries)")
    void installedViewEqualsModel() {
        SeededTries.run("installedViewEqualsModel", 2000, 20261129L, GlobalIndexModelProperties::draw, c -> {
            World w = new World(c.tinyBudget());
            for (Action a : c.actions()) {
                w.step(a);
                w.checkInvariants();
            }
        });
    }

    /** The independent model of one source incarnation plus the sender that plays it. */
    static final class Source {
        final Incarnation incarnation;
        final List<ResidenceRecord> journal = new ArrayList<>();
        final Map<String, ResidenceRecord> resident = new TreeMap<>();
        boolean admitted = true;
        // sender state
        boolean streaming;
        UUID viewId;
        long cursor;
        long frame;
        long views;

        Source(Incarnation incarnation) {
            this.incarnation = incarnation;
        }

        long head() {
            return journal.size();
        }

        void mutate(Random rnd, int n) {
            for (int i = 0; i < n; i++) {
                StateKey k = UNIVERSE.get(rnd.nextInt(UNIVERSE.size()));
                Medium m = rnd.nextBoolean() ? Medium.DRAM : Medium.SSD;
                long seq = head() + 1;
                ResidenceRecord r = rnd.nextInt(3) == 0 ? ResidenceRecord.delete(k, m, seq)
                        : ResidenceRecord.put(k, m, seq, rnd.nextInt(1000));
                journal.add(r);
                String id = residenceId(k, m);
                if (r.isDelete()) {
                    resident.remove(id);
                } else {
                    resident.put(id, r);
                }
            }
        }

        /** Model state at sequence {@code w}: replay of the journal prefix (independent of the index). */
        Map<String, ResidenceRecord> stateAt(long w) {
            Map<String, ResidenceRecord> s = new HashMap<>();
            for (int i = 0; i < w; i++) {
                ResidenceRecord r = journal.get(i);
                if (r.isDelete()) {
                    s.remove(residenceId(r.key(), r.medium()));
                } else {
                    s.put(residenceId(r.key(), r.medium()), r);
                }
            }
            return s;
        }

        /** Coalesced records of (from, to]: the last record per residence (PUB-1, PUB-6). */
        List<ResidenceRecord> coalesced(long from, long to) {
            Map<String, ResidenceRecord> last = new LinkedHashMap<>();
            for (long s = from + 1; s <= to; s++) {
                ResidenceRecord r = journal.get((int) (s - 1));
                last.remove(residenceId(r.key(), r.medium()));
                last.put(residenceId(r.key(), r.medium()), r);
            }
            return new ArrayList<>(last.values());
        }
    }

    static String residenceId(StateKey k, Medium m) {
        return k.namespace() + "/" + k.keyHex() + "/" + m;
    }

    static final class World {
        final ManualClock clock = new ManualClock();
        final GlobalIndex index;
        final Source[] sources = new Source[2];
        final Random rnd = new Random(1);
        final long budgetMax;
        long revision = 1;
        int epochs = 1;

        World(boolean tinyBudget) {
            budgetMax = tinyBudget ? 1_500 : IndexConfig.INDEX_BYTES_MAX_DEFAULT;
            index = GlobalIndex.create(SELF, SCOPE, IndexConfig.defaults().withIndexBytesMax(budgetMax), clock,
                    Runnable::run);
            sources[0] = new Source(TestMembership.incarnation("a", 1, 11));
            sources[1] = new Source(TestMembership.incarnation("b", 1, 21));
            publishMembership();
        }

        void publishMembership() {
            List<Incarnation> members = new ArrayList<>(List.of(SELF));
            for (Source s : sources) {
                if (s.admitted) {
                    members.add(s.incarnation);
                }
            }
            index.onMembership(TestMembership.of(++revision, true, members));
        }

        void step(Action a) {
            rnd.setSeed(a.b());
            Source s = sources[a.owner()];
            switch (a.kind()) {
                case MUTATE -> s.mutate(rnd, a.a());
                case CLOCK -> clock.advanceMs(a.a() * 1_500L);
                case REMOVE -> {
                    s.admitted = false;
                    publishMembership();
                }
                case READMIT -> {
                    if (!s.admitted) {
                        // A healed node is a new incarnation with a new journal lineage (INV-7).
                        Incarnation next = TestMembership.incarnation(s.incarnation.nodeId().value(), ++epochs, a.b());
                        sources[a.owner()] = new Source(next);
                        publishMembership();
                    }
                }
                case RECONNECT -> reconnect(s);
                case BOOTSTRAP -> bootstrap(s, a.a());
                default -> {
                    if (!s.admitted) {
                        return;
                    }
                    if (!s.streaming) {
                        bootstrap(s, a.a());
                        return;
                    }
                    delta(s, a);
                }
            }
        }

        void reconnect(Source s) {
            index.discardStaging(s.incarnation, ResetCause.DISCONNECT);
            s.frame = 0;
            Optional<InstalledCursor> c = index.installedCursor(s.incarnation);
            s.streaming = c.isPresent();
            c.ifPresent(ic -> {
                s.viewId = ic.viewId();
                s.cursor = ic.watermark();
            });
        }

        void delta(Source s, Action a) {
            long head = s.head();
            long from;
            long to;
            switch (a.kind()) {
                case DUPLICATE -> {
                    if (s.cursor == 0) {
                        return;
                    }
                    to = Math.max(1, s.cursor - rnd.nextInt((int) s.cursor));
                    from = to - 1 - rnd.nextInt((int) to);
                    from = Math.max(0, from);
                }
                case OVERLAP -> {
                    if (s.cursor == 0 || head <= s.cursor) {
                        return;
                    }
                    from = s.cursor - 1 - rnd.nextInt((int) s.cursor);
                    to = s.cursor + 1 + rnd.nextInt((int) (head - s.cursor));
                }
                case GAP -> {
                    if (head < s.cursor + 2) {
                        return;
                    }
                    from = s.cursor + 1 + rnd.nextInt((int) (head - s.cursor - 1));
                    to = from + rnd.nextInt((int) (head - from) + 1);
                }
                default -> {
                    from = s.cursor;
                    to = Math.min(head, s.cursor + a.a());
                }
            }
            List<ResidenceRecord> recs = s.coalesced(from, to);
            long f = ++s.frame;
            if (a.kind() == Kind.LOSE) {
                s.cursor = to; // sent, never arrives: the receiver must answer the next frame with NeedRepair
                return;
            }
            long a0 = index.installedCursor(s.incarnation).map(InstalledCursor::watermark).orElse(-1L);
            DeltaOutcome out = index.applyDelta(s.incarnation, s.viewId, f, Interval.of(from, to), recs);
            // The interval rules, checked against the receiver's watermark before the frame (DELTA-7..9).
            switch (out) {
                case DeltaOutcome.Applied ap -> {
                    assertThat(from).as("applied only from the watermark").isEqualTo(a0);
                    assertThat(ap.watermark()).isEqualTo(to);
                    s.cursor = to;
                }
                case DeltaOutcome.Duplicate d -> {
                    assertThat(to).isLessThanOrEqualTo(a0);
                    assertThat(d.watermark()).isEqualTo(a0);
                }
                case DeltaOutcome.ResumeFrom r -> {
                    assertThat(from).isLessThan(a0);
                    assertThat(to).isGreaterThan(a0);
                    assertThat(r.appliedCursor()).isEqualTo(a0);
                    s.cursor = a0;
                }
                case DeltaOutcome.NeedRepair r -> {
                    assertThat(from).isGreaterThan(a0);
                    assertThat(r.appliedCursor()).isEqualTo(a0);
                    s.cursor = a0;
                }
                case DeltaOutcome.Rejected r -> {
                    assertThat(r.reason()).isIn(RejectReason.BUDGET_EXCEEDED, RejectReason.VIEW_UNKNOWN);
                    s.streaming = false;
                }
            }
        }

        /** SNAP-1..SNAP-5 with mutations between pages; may lose a page (commit must then be refused). */
        void bootstrap(Source s, int pageSize) {
            if (!s.admitted) {
                return;
            }
            index.discardStaging(s.incarnation, ResetCause.SESSION_REPLACED);
            s.frame = 0;
            s.streaming = false;
            UUID view = new UUID(s.incarnation.epoch().value(), ++s.views);
            long s0 = s.head();
            long begin = ++s.frame;
            TranscriptDigest.Builder t = TranscriptDigest.builder().begin(begin, view, SCOPE.digest(), s0);
            if (!(index.beginStaging(s.incarnation, view, SCOPE.digest(), s0, begin) instanceof StageOutcome.Staged)) {
                return;
            }
            boolean losePage = rnd.nextInt(8) == 0;
            long pages = 0;
            long maxScanned = 0;
            long last = begin;
            String after = "";
            boolean alive = true;
            while (true) {
                // The ordered resident map is walked while it changes (SNAP-2).
                List<ResidenceRecord> page = new ArrayList<>();
                for (Map.Entry<String, ResidenceRecord> e : s.resident.entrySet()) {
                    if (e.getKey().compareTo(after) > 0 && page.size() < pageSize) {
                        page.add(e.getValue());
                    }
                }
                if (page.isEmpty()) {
                    break;
                }
                after = residenceId(page.getLast().key(), page.getLast().medium());
                page.sort(GlobalIndexModelProperties::residenceOrder);
                long f = ++s.frame;
                last = f;
                pages++;
                t.page(f, pages, page);
                for (ResidenceRecord r : page) {
                    maxScanned = Math.max(maxScanned, r.sequence());
                }
                boolean lost = losePage && pages == 1;
                if (!lost && alive) {
                    StageOutcome o = index.stagePage(s.incarnation, view, pages, f, page);
                    if (o instanceof StageOutcome.Rejected r) {
                        assertThat(r.reason()).isIn(RejectReason.BUDGET_EXCEEDED, RejectReason.FRAME_OUT_OF_ORDER);
                        alive = r.reason() != RejectReason.BUDGET_EXCEEDED;
                    }
                }
                s.mutate(rnd, rnd.nextInt(3));
            }
            long s1 = s.head();
            // Replay (S0, S1] in up to two coalesced frames (SNAP-3).
            long mid = s0 + (s1 - s0) / 2;
            for (Interval iv : List.of(Interval.of(s0, mid), Interval.of(mid, s1))) {
                if (iv.isEmpty()) {
                    continue;
                }
                List<ResidenceRecord> recs = s.coalesced(iv.from(), iv.to());
                long f = ++s.frame;
                last = f;
                t.replay(f, iv, recs);
                if (alive) {
                    index.applyDelta(s.incarnation, view, f, iv, recs);
                }
            }
            CommitMarker marker = new CommitMarker(s1, pages, begin, last, maxScanned, t.finish());
            ++s.frame;
            CommitOutcome c = index.commit(s.incarnation, view, marker);
            if (c instanceof CommitOutcome.Installed in) {
                assertThat(losePage && pages > 0).as("a commit with a lost page must be refused").isFalse();
                assertThat(in.watermark()).isEqualTo(s1);
                s.streaming = true;
                s.viewId = view;
                s.cursor = s1;
            } else {
                reconnect(s);
            }
        }

        void checkInvariants() {
            LookupOutcome out = index.lookup(UNIVERSE);
            assertThat(out).isInstanceOf(LookupOutcome.Candidates.class);
            LookupOutcome.Candidates c = (LookupOutcome.Candidates) out;
            boolean allInstalled = true;
            for (Source s : sources) {
                if (!s.admitted) {
                    assertThat(index.installedCursor(s.incarnation)).isEmpty();
                    assertThat(rowsOf(c, s.incarnation)).as("removed owner rows are excluded").isEmpty();
                    continue;
                }
                Optional<InstalledCursor> cursor = index.installedCursor(s.incarnation);
                Map<String, String> rows = rowsOf(c, s.incarnation);
                if (cursor.isEmpty()) {
                    allInstalled = false;
                    assertThat(rows).as("no installed view, no rows (staging never serves)").isEmpty();
                } else {
                    Map<String, String> expected = new TreeMap<>();
                    s.stateAt(cursor.get().watermark()).forEach((id, r) -> expected.put(id, r.sequence() + "/" + r.sizeBytes()));
                    assertThat(rows).as("installed view of %s at %d", s.incarnation, cursor.get().watermark())
                            .isEqualTo(expected);
                }
            }
            if (c.coverage() == Coverage.CompleteAtWatermarks) {
                assertThat(allInstalled).as("Complete while a member lacks an installed view").isTrue();
            }
            assertThat(index.status().budgetBytesUsed()).isBetween(0L, budgetMax);
        }

        static Map<String, String> rowsOf(LookupOutcome.Candidates c, Incarnation owner) {
            Map<String, String> rows = new TreeMap<>();
            for (KeyCandidates kc : c.keys()) {
                for (Replica r : kc.replicas()) {
                    if (r.owner().equals(owner)) {
                        rows.put(residenceId(kc.key(), r.medium()), r.sequence() + "/" + r.sizeBytes());
                    }
                }
            }
            return rows;
        }
    }

    static int residenceOrder(ResidenceRecord x, ResidenceRecord y) {
        int c = x.key().compareTo(y.key());
        return c != 0 ? c : x.medium().compareTo(y.medium());
    }
}
