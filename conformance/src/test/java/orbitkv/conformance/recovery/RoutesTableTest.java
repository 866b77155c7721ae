package orbitkv.conformance.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.CompletionTarget;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LaneHeadroom;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Restore;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.recovery.RouteSource;
import orbitkv.recovery.RouteTrace;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.TraceSampling;
import orbitkv.recovery.TransferPorts;
import orbitkv.testing.TableRows;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs {@code tables/recovery/routes.table} (ROUTE-1..ROUTE-8, ROUTE-10, ROUTE-11, IDX-14) through the exported
 * recovery API only. The oracle is the table's literal expected column, computed by hand in its header; this test
 * parses, drives and compares, and never calls anything that scores routes except the code under test itself.
 * Observations are produced the only way they can be: by executing one-route restores through scripted ports on a
 * manual clock.
 */
@Tag("unit")
class RoutesTableTest {
    static final String TABLE = "/tables/recovery/routes.table";
    static final Namespace NS = Namespace.utf8("ns-route");
    static final Namespace OBS = Namespace.utf8("ns-observe");

    record Row(int line, String evidence, String observations, String demand, String expected, String rules) {}

    static List<Row> rows() throws IOException {
        return TableRows.read(TABLE, RoutesTableTest.class.getResourceAsStream(TABLE), TableRows.BARS, 4).stream()
                .map(t -> new Row(t.line(), t.column(0), t.column(1), t.column(2), t.column(3), t.rules()))
                .toList();
    }

    @Test
    @DisplayName("ROUTE-1 ROUTE-4 ROUTE-6 ROUTE-7 ROUTE-8 IDX-14 the routes table cites every rule it is the oracle for")
    void tableCitesRules() throws IOException {
        Set<String> cited = new TreeSet<>();
        Pattern id = Pattern.compile("\\b(ROUTE|IDX)-\\d+\\b");
        for (Row r : rows()) {
            Matcher m = id.matcher(r.rules());
            assertThat(m.find()).as("line %d cites a rule", r.line()).isTrue();
            do {
                cited.add(m.group());
            } while (m.find());
        }
        assertThat(cited).contains("IDX-14", "ROUTE-1", "ROUTE-2", "ROUTE-3", "ROUTE-4", "ROUTE-5", "ROUTE-6", "ROUTE-7", "ROUTE-8",
                "ROUTE-10", "ROUTE-11");
        assertThat(rows()).hasSizeGreaterThanOrEqualTo(40);
    }

    @TestFactory
    Stream<DynamicTest> routes() throws IOException {
        return rows().stream().map(row -> DynamicTest.dynamicTest(row.rules() + " (line " + row.line() + ")", () -> check(row)));
    }

    private static void check(Row row) {
        String where = TABLE + ":" + row.line() + " [" + row.rules() + "] ";
        Map<String, String> demand = options(row.demand());
        ManualClock clock = new ManualClock();
        ScriptedPorts ports = new ScriptedPorts(clock);
        RoutePolicy policy = policy(demand);
        try (RouteSelection s = RouteSelection.create(policy, TraceSampling.off(), clock)) {
            observe(s, ports, clock, row.observations());
            Parsed ev = evidence(row.evidence(), Integer.parseInt(demand.get("keys")));
            Demand d = demand(demand, clock);
            Map<String, String> expected = options(row.expected());
            if (demand.containsKey("restore")) {
                script(ports, demand.getOrDefault("script", ""));
                Restore<Route> r = s.restore(d, ev.evidence, ports);
                check(where, expected, "reads", ports.reads.isEmpty() ? "-" : String.join("+", ports.reads));
                check(where, expected, "restored", Integer.toString(r.restoredKeys()));
                check(where, expected, "stop", r.stop().traceName());
                check(where, expected, "replans", r.trace().replans().isEmpty() ? "-"
                        : r.trace().replans().stream().map(AdmissionRefusal::traceName).collect(Collectors.joining(",")));
                check(where, expected, "net", r.trace().lane().map(RouteTrace.LaneNeed::compact).orElse("-"));
                // ROUTE-10: whatever happened, delivery is a contiguous prefix in demand order
                int at = 0;
                for (Restore.Delivered<Route> del : r.delivered()) {
                    assertThat(del.route().fromIndex()).as(where + "delivery order").isEqualTo(at);
                    assertThat(del.destination()).as(where + "destination").isEqualTo(del.route());
                    at = del.route().toIndex();
                }
            } else {
                Plan p = s.plan(d, ev.evidence);
                check(where, expected, "routes", p.routes().isEmpty() ? "-"
                        : p.routes().stream().map(RoutesTableTest::text).collect(Collectors.joining("+")));
                check(where, expected, "prefix", Integer.toString(p.prefixKeys()));
                check(where, expected, "stop", p.stop().traceName());
                check(where, expected, "decision", p.decision().reason().traceName());
            }
            assertThat(expected.keySet()).as(where + "unknown expected fields")
                    .isSubsetOf("reads", "restored", "stop", "replans", "net", "routes", "prefix", "decision");
        }
    }

    private static void check(String where, Map<String, String> expected, String field, String actual) {
        if (expected.containsKey(field)) {
            assertThat(actual).as(where + field).isEqualTo(expected.get(field));
        }
    }

    /** {@code name=value} and bare {@code flag} tokens. */
    static Map<String, String> options(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String t : text.split("\\s+")) {
            if (t.isEmpty()) {
                continue;
            }
            int eq = t.indexOf('=');
            m.put(eq < 0 ? t : t.substring(0, eq), eq < 0 ? "" : t.substring(eq + 1));
        }
        return m;
    }

    static RoutePolicy policy(Map<String, String> d) {
        RoutePolicy p = RoutePolicy.defaults().withSelectionMode(switch (d.getOrDefault("mode", "shadow")) {
            case "fixed" -> SelectionMode.FIXED;
            case "shadow" -> SelectionMode.SHADOW;
            case "cost" -> SelectionMode.COST_DRIVEN;
            default -> throw new IllegalArgumentException("mode " + d.get("mode"));
        });
        if (d.containsKey("search")) {
            String[] s = d.get("search").split("/");
            p = p.withSearch(Integer.parseInt(s[0]), Integer.parseInt(s[1]));
        }
        if (d.containsKey("replans")) {
            p = p.withReplansMax(Integer.parseInt(d.get("replans")));
        }
        return p;
    }

    static Demand demand(Map<String, String> d, ManualClock clock) {
        int n = Integer.parseInt(d.get("keys"));
        List<StateKey> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(key(NS, "k" + i));
        }
        Demand demand = Demand.hostReady(NS, keys, clock.getAsLong() + 10_000_000_000L).withStaleHintsAllowed(d.containsKey("stale"));
        if (d.containsKey("bytesMax")) {
            demand = demand.withDestinationBytesMax(Long.parseLong(d.get("bytesMax")));
        }
        if ("gpu".equals(d.get("target"))) {
            demand = demand.withTarget(new CompletionTarget.GpuReady());
        }
        if (d.containsKey("lane")) { // issue 39 item 6: lane=FREE/READS, the rx lane lo/rx of the node admission window
            String[] l = d.get("lane").split("/");
            demand = demand.withNetwork(new LaneHeadroom(new NicLane("lo", NicLane.Direction.RX), Long.parseLong(l[0]),
                    Integer.parseInt(l[1])));
        }
        return demand;
    }

    static StateKey key(Namespace ns, String k) {
        return new StateKey(ns, k.getBytes(StandardCharsets.UTF_8));
    }

    record Parsed(Evidence evidence) {}

    private static final Pattern SOURCE = Pattern.compile("(L|[a-z]+(?:@\\d+)?):([DS]):(\\d+)-(\\d+)(~?)");

    static Parsed evidence(String text, int n) {
        Coverage coverage = Coverage.CompleteAtWatermarks;
        Set<RouteKind> qualified = EnumSet.allOf(RouteKind.class);
        long size = 4096;
        List<List<LocalResidence>> local = new ArrayList<>();
        List<List<Replica>> remote = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            local.add(new ArrayList<>());
            remote.add(new ArrayList<>());
        }
        for (String t : text.split("\\s+")) {
            if (t.startsWith("cov=")) {
                coverage = switch (t.substring(4)) {
                    case "C" -> Coverage.CompleteAtWatermarks;
                    case "P" -> Coverage.PartialHints;
                    case "U" -> Coverage.Unavailable;
                    default -> throw new IllegalArgumentException(t);
                };
            } else if (t.startsWith("q=")) {
                qualified = EnumSet.noneOf(RouteKind.class);
                for (String k : t.substring(2).split(",")) {
                    qualified.add(RouteKind.of(k.charAt(0) == 'L', k.charAt(1) == 'D' ? Medium.DRAM : Medium.SSD));
                }
            } else if (t.startsWith("size=")) {
                size = Long.parseLong(t.substring(5));
            } else {
                Matcher m = SOURCE.matcher(t);
                if (!m.matches()) {
                    throw new IllegalArgumentException("evidence token " + t);
                }
                Medium medium = m.group(2).equals("D") ? Medium.DRAM : Medium.SSD;
                for (int i = Integer.parseInt(m.group(3)); i < Integer.parseInt(m.group(4)); i++) {
                    if (m.group(1).equals("L")) {
                        local.get(i).add(new LocalResidence(medium, 100 + i, size));
                    } else {
                        remote.get(i).add(new Replica(owner(m.group(1)), medium, 100 + i, size, !m.group(5).isEmpty()));
                    }
                }
            }
        }
        List<KeyEvidence> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(new KeyEvidence(key(NS, "k" + i), local.get(i), remote.get(i), false));
        }
        return new Parsed(new Evidence(coverage, 1, qualified, keys));
    }

    /** {@code b} = node b epoch 1; {@code b@2} = epoch 2; the incarnation id is derived from both. */
    static Incarnation owner(String text) {
        String node = text.contains("@") ? text.substring(0, text.indexOf('@')) : text;
        long epoch = text.contains("@") ? Long.parseLong(text.substring(text.indexOf('@') + 1)) : 1;
        return new Incarnation(new NodeId(node), new NodeEpoch(epoch),
                UUID.nameUUIDFromBytes((node + "/" + epoch).getBytes(StandardCharsets.UTF_8)));
    }

    /** {@code L:D[0,3)}, {@code b:S[3,4)}, {@code b@2:D[0,2)}. */
    static String text(Route r) {
        return sourceText(r.source()) + "[" + r.fromIndex() + "," + r.toIndex() + ")";
    }

    static String sourceText(RouteSource s) {
        String med = s.medium() == Medium.DRAM ? "D" : "S";
        return switch (s) {
            case RouteSource.Local l -> "L:" + med;
            case RouteSource.Peer p -> p.owner().nodeId().value() + (p.owner().epoch().value() == 1 ? "" : "@" + p.owner().epoch().value())
                    + ":" + med;
        };
    }

    private static final Pattern OBSERVATION = Pattern.compile("(L|[a-z]+(?:@\\d+)?):([DS])\\*(\\d+)@(\\d+)(?:=(\\d+)|!(fail|timeout|refuse))");

    /** Executes one one-key restore per observation, on the source named, taking the time or ending as stated. */
    static void observe(RouteSelection s, ScriptedPorts ports, ManualClock clock, String text) {
        if (text.equals("-")) {
            return;
        }
        for (String t : text.split("\\s+")) {
            Matcher m = OBSERVATION.matcher(t);
            if (!m.matches()) {
                throw new IllegalArgumentException("observation token " + t);
            }
            String source = m.group(1) + ":" + m.group(2);
            Medium medium = m.group(2).equals("D") ? Medium.DRAM : Medium.SSD;
            long bytes = Long.parseLong(m.group(4));
            StateKey key = key(OBS, "o");
            KeyEvidence k = m.group(1).equals("L")
                    ? new KeyEvidence(key, List.of(new LocalResidence(medium, 1, bytes)), List.of(), false)
                    : new KeyEvidence(key, List.of(), List.of(new Replica(owner(m.group(1)), medium, 1, bytes, false)), false);
            Evidence e = new Evidence(Coverage.CompleteAtWatermarks, 1, EnumSet.allOf(RouteKind.class), List.of(k));
            for (int i = 0; i < Integer.parseInt(m.group(3)); i++) {
                Step step;
                long deadline = clock.getAsLong() + 10_000_000_000L;
                if (m.group(5) != null) {
                    step = new Step.Ready(Long.parseLong(m.group(5)) * 1_000);
                } else {
                    step = switch (m.group(6)) {
                        case "fail" -> new Step.Fail();
                        case "refuse" -> new Step.Refuse(AdmissionRefusal.PINS_EXHAUSTED, List.of());
                        default -> new Step.Hang();
                    };
                    if (step instanceof Step.Hang) {
                        deadline = clock.getAsLong() + 1_000_000; // 1 ms of real waiting: the manual clock stands still
                    }
                }
                ports.then(source, step);
                s.restore(Demand.hostReady(OBS, List.of(key), deadline), e, ports);
            }
        }
        ports.reads.clear();
    }

    static void script(ScriptedPorts ports, String text) {
        if (text.isEmpty()) {
            return;
        }
        for (String t : text.split(",")) {
            String[] kv = t.split("=");
            String step = kv[1];
            ports.then(kv[0], switch (step) {
                case "fail" -> new Step.Fail();
                case "credits" -> new Step.RefuseCredits(AdmissionRefusal.RECEIVE_CREDITS);
                case "memory" -> new Step.RefuseCredits(AdmissionRefusal.RESPONSE_MEMORY);
                default -> {
                    String[] r = step.split("@");
                    AdmissionRefusal reason = AdmissionRefusal.valueOf(r[0].toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
                    yield new Step.Refuse(reason, r.length > 1 ? List.of(key(NS, r[1])) : List.of());
                }
            });
        }
    }

    /** A monotonic clock that moves only when a scripted READ takes time. */
    static final class ManualClock implements java.util.function.LongSupplier {
        private final AtomicLong now = new AtomicLong(5_000_000_000L);

        @Override
        public long getAsLong() {
            return now.get();
        }

        void advance(long nanos) {
            now.addAndGet(nanos);
        }
    }

    sealed interface Step {
        record Ready(long nanos) implements Step {}

        record Fail() implements Step {}

        record Hang() implements Step {}

        record Refuse(AdmissionRefusal reason, List<StateKey> keys) implements Step {}

        record RefuseCredits(AdmissionRefusal reason) implements Step {}
    }

    /**
     * Transfer ports that follow a per-source script ({@code L:D}, {@code b:S}, ...): one step per route, consumed at
     * credits (credit refusals), at authorization (refusals) or at READ (ready after its time, failure, hang); with no
     * step left a route is granted and ready after 1 us. The destination is the route itself.
     */
    static final class ScriptedPorts implements TransferPorts<Route> {
        private final ManualClock clock;
        private final Map<String, Deque<Step>> script = new HashMap<>();
        final List<String> reads = new ArrayList<>();

        ScriptedPorts(ManualClock clock) {
            this.clock = clock;
        }

        void then(String source, Step step) {
            script.computeIfAbsent(source, k -> new ArrayDeque<>()).add(step);
        }

        private Deque<Step> queue(Route r) {
            return script.computeIfAbsent(sourceText(r.source()), k -> new ArrayDeque<>());
        }

        @Override
        public CreditOutcome<Route> credits(Route route) {
            if (queue(route).peek() instanceof Step.RefuseCredits c) {
                queue(route).poll();
                return new CreditOutcome.Refused<>(c.reason(), "scripted");
            }
            return new CreditOutcome.Held<>(new ReceiveCredit<>() {
                @Override
                public long bytes() {
                    return route.bytes();
                }

                @Override
                public Route destination() {
                    return route;
                }

                @Override
                public void release() {}
            });
        }

        @Override
        public GrantOutcome<Route> authorize(Route route, long deadlineNanos) {
            if (queue(route).peek() instanceof Step.Refuse r) {
                queue(route).poll();
                return new GrantOutcome.Refused<>(r.reason(), r.keys(), "scripted");
            }
            return new GrantOutcome.Granted<>(new SourceGrant<>() {
                @Override
                public ReadSubmission read(Route destination) {
                    reads.add(text(route));
                    Step step = queue(route).poll();
                    CompletableFuture<ReadyOutcome> ready = new CompletableFuture<>();
                    CompletableFuture<Void> drained = new CompletableFuture<>();
                    switch (step) {
                        case null -> {
                            clock.advance(1_000);
                            drained.complete(null);
                            ready.complete(new ReadyOutcome.Ready());
                        }
                        case Step.Ready r -> {
                            clock.advance(r.nanos());
                            drained.complete(null);
                            ready.complete(new ReadyOutcome.Ready());
                        }
                        case Step.Fail f -> {
                            drained.complete(null);
                            ready.complete(new ReadyOutcome.PayloadFailure("checksum-mismatch", "scripted"));
                        }
                        case Step.Hang h -> {
                            // never ready, never drained within the test: its resources stay held
                        }
                        default -> throw new IllegalStateException("step " + step + " at READ");
                    }
                    return new ReadSubmission() {
                        @Override
                        public CompletableFuture<ReadyOutcome> ready() {
                            return ready;
                        }

                        @Override
                        public CompletableFuture<Void> drained() {
                            return drained;
                        }
                    };
                }

                @Override
                public void release() {}
            });
        }
    }
}
