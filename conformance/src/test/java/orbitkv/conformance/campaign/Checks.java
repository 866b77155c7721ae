package orbitkv.conformance.campaign;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.conformance.manager.ManagerApi;

/**
 * The property checks of the campaign (issue 17 item 2): sampled while faults are active, and complete at the
 * convergence point after the heal. Each compares what the Managers answer over their HTTP API with the
 * {@link SourceModel}s (the test's own record), never with etcd block keys or the implementation's state.
 */
final class Checks {
    /** The stated bound of "after heal": membership settled, every view installed, every await answered. */
    static final Duration CONVERGE_BOUND = Duration.ofSeconds(60);
    static final long AWAIT_TIMEOUT_MS = 30_000;

    private final CampaignCluster cluster;
    private final Map<String, SourceModel> models;
    private final Violations violations;
    /** Highest watermark seen per (requester, owner incarnation, view id): it must never go back. */
    private final Map<List<String>, Long> watermarks = new ConcurrentHashMap<>();
    final AtomicLong peakCreditBytes = new AtomicLong();
    /** Judged and aborted samples by cause (issue 34 item 7). */
    final SampleTally tally = new SampleTally();
    private final SampleReader reader;

    Checks(CampaignCluster cluster, Map<String, SourceModel> models, Violations violations) {
        this.cluster = cluster;
        this.models = models;
        this.violations = violations;
        this.reader = new SampleReader(violations);
    }

    /** One owner entry of a status answer. */
    record OwnerView(String incarnation, String state, String viewId, long watermark) {}

    static Map<String, OwnerView> owners(JsonNode status) {
        Map<String, OwnerView> out = new HashMap<>();
        for (JsonNode o : status.get("owners")) {
            String inc = o.at("/owner/incarnation").asText();
            out.put(inc, new OwnerView(inc, o.get("state").asText(), o.get("view_id").isNull() ? null : o.get("view_id").asText(),
                    o.get("watermark").asLong()));
        }
        return out;
    }

    /** Incarnations a status admits: itself and every owner not REMOVED; empty if membership is not valid. */
    static Set<String> admitted(JsonNode status) {
        Set<String> out = new HashSet<>();
        if (!status.at("/membership/valid").asBoolean()) {
            return out;
        }
        out.add(status.at("/self/incarnation").asText());
        owners(status).values().stream().filter(o -> !o.state().equals("REMOVED")).forEach(o -> out.add(o.incarnation()));
        return out;
    }

    /** A remote replica as a query lists it. */
    record Listed(String key, String incarnation, String medium, long sequence, long size, boolean stale) {}

    static List<Listed> remote(JsonNode query) {
        List<Listed> out = new ArrayList<>();
        for (JsonNode c : query.get("candidates")) {
            for (JsonNode r : c.get("replicas")) {
                if (!r.get("local").asBoolean()) {
                    out.add(new Listed(c.get("key").asText(), r.at("/owner/incarnation").asText(), r.get("medium").asText(),
                            r.get("sequence").asLong(), r.get("size").asLong(), r.get("stale").asBoolean()));
                }
            }
        }
        return out;
    }

    /** UNIQUE: one listing per (key, owner, medium). */
    private void unique(String where, JsonNode query) {
        for (JsonNode c : query.get("candidates")) {
            Set<String> seen = new HashSet<>();
            for (JsonNode r : c.get("replicas")) {
                String id = r.at("/owner/incarnation").asText() + "/" + r.get("medium").asText();
                if (!seen.add(id)) {
                    violations.add(Property.UNIQUE, where + ": key " + c.get("key").asText() + " lists " + id + " twice");
                }
            }
        }
    }

    // ------------------------------------------------------------------ sampled, while faults are active

    /**
     * One sample of requester {@code r} about source {@code s}: status, query of s's keys, status. Checks that
     * every listed incarnation was admitted by one of the two statuses (STALE_INCARNATION), each key lists an
     * owner once (UNIQUE), the installed watermark never goes back (ORDERED), and the rows of s's current
     * lineage equal the model's state of s at one sequence between the two watermarks (ATOMIC).
     */
    void sample(CampaignCluster.Node r, CampaignCluster.Node s) {
        sample(Sampled.of(r), Sampled.of(s));
    }

    /**
     * {@link #sample(CampaignCluster.Node, CampaignCluster.Node)} on injected answers, counted in {@link #tally}
     * (issue 34 item 7): a sample is judged, or aborted by a named {@link SampleTally.Cause}; a 5xx from a node
     * that stayed live is an {@link Property#ANSWERS} violation (and judged), never a dropped sample.
     */
    void sample(Sampled r, Sampled s) {
        String where = "sample " + r.name() + " of " + s.name();
        try {
            JsonNode st1 = reader.answer(where, r, r::status);
            JsonNode q = reader.answer(where, r, () -> r.query(Workload.keys(s.name())));
            JsonNode st2 = reader.answer(where, r, r::status);
            if (!st1.at("/self/incarnation").asText().equals(st2.at("/self/incarnation").asText())) {
                tally.aborted(SampleTally.Cause.REQUESTER_HEALED);
                return;
            }
            judge(where, r, s, st1, q, st2);
            tally.judged();
        } catch (SampleReader.Unjudged u) {
            count(u);
            return;
        } catch (RuntimeException shape) {
            // a 200 whose JSON lacks what the documented answer holds: visible, never swallowed
            violations.add(Property.ANSWERS, where + ": answer not of the documented shape: " + shape);
            tally.judged();
            return;
        }
        try {
            credit(s.name(), reader.answer(where, s, s::status)); // the source's side; r's properties are already judged
        } catch (SampleReader.Unjudged u) {
            // not counted again: the sample was judged on r's answers; a live source's 5xx is already a violation
        }
    }

    private void count(SampleReader.Unjudged u) {
        if (u.cause == null) {
            tally.judged(); // a live node's 5xx or unreadable 200: recorded as an ANSWERS violation by answer()
        } else {
            tally.aborted(u.cause);
        }
    }

    private void judge(String where, Sampled r, Sampled s, JsonNode st1, JsonNode q, JsonNode st2) {
        Set<String> ok = new HashSet<>(admitted(st1));
        ok.addAll(admitted(st2));
        for (Listed l : remote(q)) {
            if (!ok.contains(l.incarnation())) {
                violations.add(Property.STALE_INCARNATION, where + ": lists " + l.key() + " of " + l.incarnation()
                        + ", admitted by neither status around the query " + ok);
            }
        }
        unique(where, q);
        cut(where, r, s, st1, q, st2);
    }

    private void cut(String where, Sampled r, Sampled s, JsonNode st1, JsonNode q, JsonNode st2) {
        if ("Unavailable".equals(q.path("coverage").asText())) {
            // A suspended or fenced requester answers from its local tiers only (INV-10, docs/api.md coverage
            // table): no remote replica, whatever its untouched installed views say. Comparing its empty rows
            // with a view was the campaign's own bug (regression row 1 of docs/campaign.md).
            List<Listed> listed = remote(q);
            if (!listed.isEmpty()) {
                violations.add(Property.STALE_INCARNATION, where + ": coverage Unavailable (membership suspended or fenced) "
                        + "but the answer lists " + listed.size() + " remote replicas, e.g. " + listed.get(0));
            }
            return;
        }
        SourceModel model = models.get(s.name());
        String inc = model.lineageIncarnation();
        if (inc == null) {
            return;
        }
        OwnerView o1 = owners(st1).get(inc);
        OwnerView o2 = owners(st2).get(inc);
        if (o1 == null || o2 == null || o1.viewId() == null || !o1.state().equals("INSTALLED")
                || !o2.state().equals("INSTALLED") || !o1.viewId().equals(o2.viewId())) {
            return;
        }
        if (o2.watermark() < o1.watermark()) {
            model.suspect(Property.ORDERED, where + ": watermark of view " + o1.viewId() + " went from "
                    + o1.watermark() + " to " + o2.watermark());
        }
        List<String> id = List.of(String.valueOf(r.incarnation()), inc, o1.viewId());
        Long before = watermarks.get(id);
        if (before != null && o1.watermark() < before) {
            model.suspect(Property.ORDERED, where + ": watermark of view " + o1.viewId() + " went back from "
                    + before + " to " + o1.watermark());
        }
        watermarks.merge(id, o2.watermark(), Math::max);
        Map<String, List<Long>> rows = new TreeMap<>();
        boolean staleRows = false;
        for (Listed l : remote(q)) {
            if (l.incarnation().equals(inc)) {
                if (l.stale()) {
                    staleRows = true;
                }
                rows.put(l.key(), List.of(l.sequence(), l.size()));
            }
        }
        if (staleRows) {
            return;
        }
        if (!atomicOrUnjudged(rows, o1.watermark(), o2.watermark(), model)) {
            model.suspect(Property.ATOMIC, where + ": rows of " + inc + " " + rows + " equal the source's state at no sequence in ["
                    + o1.watermark() + ", " + o2.watermark() + "]; at " + o2.watermark() + " it was " + model.stateAt(o2.watermark()));
        }
    }

    /**
     * ATOMIC for one sample: true if {@code rows} (a requester's rows of one source, key to [sequence, size],
     * read between two statuses whose installed watermarks were {@code from} and {@code to}) equal the model's
     * state at some sequence in {@code [from, to]}, or if the model cannot judge them: it knows no state in the
     * window, or the window reaches past the last sequence it has recorded. The workload records an
     * acknowledged save only after its answer arrived, so a requester may already list a save whose answer is
     * still on its way to the workload thread; comparing with the model's older state then was a false ATOMIC
     * (campaign regression row 3).
     */
    static boolean atomicOrUnjudged(Map<String, List<Long>> rows, long from, long to, SourceModel model) {
        List<Long> points = new ArrayList<>();
        points.add(from);
        for (long p : model.changePoints()) {
            if (p > from && p <= to) {
                points.add(p);
            }
        }
        boolean anyKnown = false;
        for (long p : points) {
            Map<String, SourceModel.Put> state = model.stateAt(p);
            if (state == null) {
                continue;
            }
            anyKnown = true;
            Map<String, List<Long>> expected = new TreeMap<>();
            state.forEach((k, put) -> expected.put(k, List.of(put.sequence(), (long) Workload.size(put.generation()))));
            if (expected.equals(rows)) {
                return true;
            }
        }
        return !anyKnown || to > model.recordedThrough();
    }

    /** CREDIT: every served session's outstanding and peak bytes within the receive window ({@code st}: s's status). */
    void credit(String s, JsonNode st) {
        for (JsonNode served : st.at("/sessions/served")) {
            long out = served.get("outstanding_bytes").asLong();
            long peak = served.get("peak_outstanding_bytes").asLong();
            peakCreditBytes.accumulateAndGet(peak, Math::max);
            if (out > CampaignCluster.RECEIVE_WINDOW_BYTES || peak > CampaignCluster.RECEIVE_WINDOW_BYTES) {
                violations.add(Property.CREDIT, s + ": session to " + served.at("/requester/incarnation").asText()
                        + " has " + out + " outstanding, peak " + peak + " > window " + CampaignCluster.RECEIVE_WINDOW_BYTES);
            }
        }
    }

    // ------------------------------------------------------------------ convergence, after the heal

    /**
     * True once every live node reports its current incarnation as self, a valid membership admitting exactly
     * the current incarnations of the live nodes, every one of them INSTALLED, and CompleteAtWatermarks.
     */
    boolean settled() {
        Set<String> current = cluster.currentIncarnations();
        for (CampaignCluster.Node n : cluster.live()) {
            try {
                JsonNode st = n.api.status();
                if (!st.at("/self/incarnation").asText().equals(n.incarnation) || !st.at("/membership/valid").asBoolean()
                        || !st.get("coverage").asText().equals("CompleteAtWatermarks")) {
                    return false;
                }
                if (!admitted(st).equals(current)) {
                    return false;
                }
                for (OwnerView o : owners(st).values()) {
                    if (current.contains(o.incarnation()) && !o.state().equals("INSTALLED")) {
                        return false;
                    }
                }
            } catch (RuntimeException | AssertionError e) {
                return false;
            }
        }
        return true;
    }

    /**
     * The complete check at the convergence point, with the load stopped: per live source its local state
     * (query + restore: RELIABLE against the model, BYTES exact), then its fence awaited on every other live
     * node (RELIABLE within {@link #AWAIT_TIMEOUT_MS}) whose rows of it must equal the source's own state
     * (RELIABLE, ORDERED), no incarnation but the current ones listed anywhere (STALE_INCARNATION), and every
     * served session's credit back to 0 (CREDIT).
     */
    void converged(PeerRestore peerRestore) {
        Set<String> current = cluster.currentIncarnations();
        for (CampaignCluster.Node s : cluster.live()) {
            SourceModel model = models.get(s.name);
            JsonNode local = s.api.queryFullOnly(CampaignCluster.NAMESPACE, Workload.keys(s.name)).json();
            unique("local " + s.name, local);
            Map<String, long[]> own = new LinkedHashMap<>(); // key -> {sequence, size}
            for (JsonNode c : local.get("candidates")) {
                for (JsonNode r : c.get("replicas")) {
                    if (r.get("local").asBoolean()) {
                        own.put(c.get("key").asText(), new long[] {r.get("sequence").asLong(), r.get("size").asLong()});
                    }
                }
            }
            Set<Long> seqs = new HashSet<>();
            own.forEach((k, v) -> {
                if (!seqs.add(v[0])) {
                    violations.add(Property.UNIQUE, s.name + ": two keys hold sequence " + v[0]);
                }
            });
            Map<String, Long> generations = restoreLocal(s, new ArrayList<>(own.keySet()));
            Map<String, Long> sequences = new HashMap<>();
            own.forEach((k, v) -> sequences.put(k, v[0]));
            JsonNode status = s.api.status();
            List<SourceModel.Suspicion> confirmed = new ArrayList<>();
            violations.addAll(Property.RELIABLE, model.settle(generations, sequences, status.at("/inventory/head_sequence").asLong(),
                    status.at("/self/incarnation").asText(), confirmed));
            confirmed.forEach(c -> violations.add(c.property(), c.message()));
            JsonNode fence = s.api.sync().json().get("inventory_fence");
            for (CampaignCluster.Node r : cluster.live()) {
                if (r == s) {
                    continue;
                }
                ManagerApi.Reply a = r.api.await(fence, r.api.status().at("/scope/digest").asText(), AWAIT_TIMEOUT_MS);
                if (a.status() != 200) {
                    violations.add(Property.RELIABLE, r.name + " could not await " + s.name + "'s fence " + fence
                            + " within " + AWAIT_TIMEOUT_MS + " ms: " + a.status() + " " + a.text());
                    continue;
                }
                JsonNode q = r.api.queryFullOnly(CampaignCluster.NAMESPACE, Workload.keys(s.name)).json();
                unique(r.name + " of " + s.name, q);
                Map<String, List<Long>> listed = new TreeMap<>();
                for (Listed l : remote(q)) {
                    if (!current.contains(l.incarnation())) {
                        violations.add(Property.STALE_INCARNATION, r.name + " lists " + l.key() + " of " + l.incarnation()
                                + " after heal; current: " + current);
                    } else if (l.incarnation().equals(s.incarnation)) {
                        listed.put(l.key(), List.of(l.sequence(), l.size()));
                    }
                }
                Map<String, List<Long>> expected = new TreeMap<>();
                own.forEach((k, v) -> expected.put(k, List.of(v[0], v[1])));
                if (!listed.equals(expected)) {
                    Set<String> missing = new HashSet<>(expected.keySet());
                    missing.removeAll(listed.keySet());
                    violations.add(missing.isEmpty() ? Property.ORDERED : Property.RELIABLE, r.name + " lists "
                            + listed.size() + " of " + s.name + "'s " + expected.size() + " residences after awaiting its fence; missing "
                            + missing + "; listed " + listed + " expected " + expected);
                }
                peerRestore.check(r, s, generations, violations);
            }
        }
        idleCredit();
    }

    /** Restores {@code keys} from {@code s} itself: every one must come back, bytes equal to the model's payload. */
    private Map<String, Long> restoreLocal(CampaignCluster.Node s, List<String> keys) {
        Map<String, Long> generations = new TreeMap<>();
        if (keys.isEmpty()) {
            return generations;
        }
        ManagerApi.Reply r = s.api.restore(CampaignCluster.NAMESPACE, keys);
        Map<String, byte[]> back = r.status() == 200 ? ManagerApi.unframe(r.body()) : Map.of();
        for (String k : keys) {
            byte[] p = back.get(k);
            if (p == null || p.length < 16) {
                violations.add(Property.BYTES, s.name + ": local restore of resident " + k + " returned nothing (status "
                        + r.status() + ")");
                continue;
            }
            long g = ManagerApi.header(p)[0];
            if (!java.util.Arrays.equals(p, Workload.payload(g, k))) {
                violations.add(Property.BYTES, s.name + ": restored bytes of " + k + " (generation " + g
                        + ") differ from the saved payload");
            }
            generations.put(k, g);
        }
        return generations;
    }

    /** CREDIT at rest: with no load, every served session's outstanding bytes return to 0 (within 10 s). */
    private void idleCredit() {
        for (CampaignCluster.Node s : cluster.live()) {
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (true) {
                long outstanding = 0;
                JsonNode st = s.api.status();
                for (JsonNode served : st.at("/sessions/served")) {
                    outstanding += served.get("outstanding_bytes").asLong();
                    peakCreditBytes.accumulateAndGet(served.get("peak_outstanding_bytes").asLong(), Math::max);
                }
                if (outstanding == 0) {
                    break;
                }
                if (System.nanoTime() > end) {
                    violations.add(Property.CREDIT, s.name + ": " + outstanding + " frame bytes still outstanding 10 s after the load stopped");
                    break;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L); // polling a bounded condition
            }
        }
    }

    /**
     * Peer restores: bytes of a source restored at a requester. {@link #BYTES_FROM_PEER} (the default since
     * transfer is wired, issue 13) restores the source's blocks at every requester and compares bytes;
     * {@link #NOT_WIRED} checks nothing (-Dorbitkv.campaign.peer-restore=false).
     */
    interface PeerRestore {
        void check(CampaignCluster.Node requester, CampaignCluster.Node source, Map<String, Long> generations, Violations v);

        PeerRestore NOT_WIRED = (r, s, g, v) -> {};

        PeerRestore BYTES_FROM_PEER = (r, s, generations, v) -> {
            if (generations.isEmpty()) {
                return;
            }
            List<String> keys = new ArrayList<>(generations.keySet());
            ManagerApi.Reply reply = r.api.restore(CampaignCluster.NAMESPACE, keys);
            Map<String, byte[]> back = reply.status() == 200 ? ManagerApi.unframe(reply.body()) : Map.of();
            for (String k : keys) {
                byte[] p = back.get(k);
                if (p == null || !java.util.Arrays.equals(p, Workload.payload(generations.get(k), k))) {
                    v.add(Property.BYTES, r.name + ": peer restore of " + s.name + "'s " + k + " did not return its bytes");
                }
            }
        };
    }
}
