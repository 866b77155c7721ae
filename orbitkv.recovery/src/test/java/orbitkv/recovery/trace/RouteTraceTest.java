package orbitkv.recovery.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import orbitkv.index.Coverage;
import orbitkv.recovery.AdmissionRefusal;
import orbitkv.recovery.Decision;
import orbitkv.recovery.DecisionReason;
import orbitkv.recovery.LaneHeadroom;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.Prediction;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.RouteKind;
import orbitkv.recovery.RouteOutcome;
import orbitkv.recovery.RouteTrace;
import orbitkv.recovery.SelectionMode;
import orbitkv.recovery.TracePage;
import orbitkv.recovery.TraceSampling;
import orbitkv.recovery.TracedRoute;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Route traces: the bounded header, the structured form, the ring and the sampled JSONL file (ROUTE-3). */
@Tag("unit")
class RouteTraceTest {
    static RouteTrace trace(long id, int routes, String owner) {
        List<TracedRoute> rs = new ArrayList<>();
        for (int i = 0; i < Math.min(routes, RouteTrace.ROUTES_MAX); i++) {
            boolean refused = i % 5 == 4;
            rs.add(new TracedRoute(i % 2 == 0 ? RouteKind.LOCAL_DRAM : RouteKind.PEER_SSD, i % 2 == 0 ? "local" : owner, i, i + 1, 4096,
                    refused ? RouteOutcome.REFUSED : RouteOutcome.READY,
                    refused ? Optional.of(AdmissionRefusal.PINS_EXHAUSTED) : Optional.empty(), refused ? -1 : 1000L * i));
        }
        Decision d = new Decision(SelectionMode.COST_DRIVEN, DecisionReason.SWITCH, true, Optional.of(new Prediction(900_000, 50_000, 1)),
                Optional.of(new Prediction(812_400, 40_100, 0.99)), "local-dram[0,3)+peer-ssd@" + owner + "[3,12)", 40, 9);
        return new RouteTrace(id, 128, "host", 50_000_000, false, Coverage.PartialHints, 42, 5, 12, PrefixStop.NOT_IN_PARTIAL_HINTS, d,
                rs, Math.max(0, routes - RouteTrace.ROUTES_MAX), List.of(AdmissionRefusal.STALE_GENERATION, AdmissionRefusal.PINS_EXHAUSTED),
                OptionalLong.of(3_100_000_000L), OptionalLong.of(137_600), OptionalLong.of(250_000_000L), 12, PrefixStop.DEADLINE,
                950_000, 1);
    }

    @Test
    @DisplayName("ROUTE-3 the header names demand, prefix, stop, coverage, decision, prediction, error, age, replans, readiness, drain")
    void headerFields() {
        String h = trace(1, 3, "n2/1").header();
        assertThat(h).startsWith("v1 k=128 r=12 stop=deadline plan=12:not-in-partial-hints cov=partial sel=cost-driven:switch:executed")
                .contains(" src=5 evals=40 pred=812us+-40us err=138us age=3100ms load-age=250ms replan=stale-generation,pins-exhausted")
                .contains(" t=950us drain=1 routes=local-dram[0,1):ready,peer-ssd@n2/1[1,2):ready,local-dram[2,3):ready");
        assertThat(h.chars().allMatch(c -> c >= 0x20 && c < 0x7f)).isTrue();
    }

    @Test
    @DisplayName("ROUTE-3 the header is at most 512 ASCII bytes however many routes and however long the owners")
    void headerBound() {
        String owner = "n".repeat(64) + "/9223372036854775807";
        for (int routes : new int[] {0, 1, 7, 32, 200}) {
            String h = trace(1, routes, owner).header();
            assertThat(h.getBytes(StandardCharsets.US_ASCII)).hasSizeLessThanOrEqualTo(RouteTrace.HEADER_BYTES_MAX);
            if (routes > 2) {
                assertThat(h).containsPattern(",\\+\\d+$|routes=\\+\\d+$");
            }
        }
    }

    @Test
    @DisplayName("ROUTE-3 issue 39 item 6: the network constraint is explained in the header (net=) and the JSONL line (lane), and stays within the bound")
    void laneInHeaderAndLine() throws Exception {
        RouteTrace t = trace(1, 3, "n2/1");
        RouteTrace withLane = new RouteTrace(t.id(), t.demandKeys(), t.target(), t.deadlineBudgetNanos(),
                t.staleHintsAllowed(), t.coverage(), t.viewGeneration(), t.eligibleSources(), t.plannedPrefixKeys(),
                t.plannedStop(), t.decision(), t.routes(), t.routesOmitted(), t.replans(), t.evidenceAgeNanos(),
                t.predictionErrorNanos(), t.loadAgeNanos(), t.restoredKeys(), t.stop(), t.readyNanos(), t.drainPending(),
                Optional.of(new RouteTrace.LaneNeed(new LaneHeadroom(new NicLane("lo", NicLane.Direction.RX), 8_192, 4),
                        16_384)));
        assertThat(t.header()).doesNotContain(" net=");
        assertThat(withLane.header()).contains(" load-age=250ms net=lo/rx:free=8192:need=16384:blocked replan=");
        String line = new String(TraceFile.line(withLane), StandardCharsets.UTF_8);
        assertThat(line).contains("\"lane\":{\"lane\":\"lo/rx\",\"free_bytes\":8192,\"need_bytes\":16384,\"blocked\":true}")
                .contains("\"load_age_ns\":250000000");
        assertThat(new String(TraceFile.line(t), StandardCharsets.UTF_8)).doesNotContain("\"lane\"");
        String owner = "n".repeat(64) + "/9223372036854775807";
        RouteTrace big = trace(1, 200, owner);
        assertThat(new RouteTrace(big.id(), big.demandKeys(), big.target(), big.deadlineBudgetNanos(),
                big.staleHintsAllowed(), big.coverage(), big.viewGeneration(), big.eligibleSources(),
                big.plannedPrefixKeys(), big.plannedStop(), big.decision(), big.routes(), big.routesOmitted(),
                big.replans(), big.evidenceAgeNanos(), big.predictionErrorNanos(), big.loadAgeNanos(), big.restoredKeys(),
                big.stop(), big.readyNanos(), big.drainPending(), withLane.lane()).header()
                .getBytes(StandardCharsets.US_ASCII)).hasSizeLessThanOrEqualTo(RouteTrace.HEADER_BYTES_MAX);
    }

    @Test
    @DisplayName("ROUTE-3 the ring keeps the newest traces and pages them newest first")
    void ring() {
        TraceRing ring = new TraceRing(5);
        for (int i = 1; i <= 8; i++) {
            ring.add(trace(i, 1, "b/1"));
        }
        TracePage p1 = ring.page(2, OptionalLong.empty());
        assertThat(p1.traces()).extracting(RouteTrace::id).containsExactly(8L, 7L);
        TracePage p2 = ring.page(2, p1.nextBeforeId());
        assertThat(p2.traces()).extracting(RouteTrace::id).containsExactly(6L, 5L);
        TracePage p3 = ring.page(2, p2.nextBeforeId());
        assertThat(p3.traces()).extracting(RouteTrace::id).containsExactly(4L);
        assertThat(p3.nextBeforeId()).isEmpty();
        assertThatThrownBy(() -> ring.page(0, OptionalLong.empty())).hasMessageContaining("limit");
    }

    @Test
    @DisplayName("INV-9 the sampled JSONL file writes every n-th trace, refuses beyond its bounds and counts it")
    void jsonl(@TempDir Path dir) throws Exception {
        String one = new String(TraceFile.line(trace(1, 3, "b/1")), StandardCharsets.UTF_8);
        try (TraceFile f = new TraceFile(TraceSampling.every(2).withDirectory(dir).withBounds(1024 * 1024, 3))) {
            for (int i = 1; i <= 10; i++) {
                f.offer(trace(i, 3, "b/1"));
            }
            assertThat(f.counters()).containsExactly(5, 3, 2, 0); // sampled, lines, refused, errors
            List<String> lines = Files.readAllLines(f.path());
            assertThat(lines).hasSize(3);
            assertThat(f.path().getParent()).isEqualTo(dir.toAbsolutePath().normalize());
            JsonParser p = new JsonFactory().createParser(lines.get(0));
            List<String> fields = new ArrayList<>();
            while (p.nextToken() != null) {
                if (p.currentToken() == JsonToken.FIELD_NAME && p.getParsingContext().getParent().inRoot()) {
                    fields.add(p.currentName());
                }
            }
            assertThat(fields).contains("id", "demand_keys", "coverage", "eligible_sources", "decision", "fixed_mean_ns",
                    "alternative_mean_ns", "routes", "replans", "evidence_age_ns", "prediction_error_ns", "restored", "stop",
                    "ready_ns", "drain_pending");
            assertThat(lines.get(0)).contains("\"id\":2");
        }
        long bytesMax = Math.max(1024, one.length() * 3L / 2); // room for one line, not two
        try (TraceFile f = new TraceFile(TraceSampling.every(1).withDirectory(dir).withBounds(bytesMax, 1000))) {
            f.offer(trace(1, 3, "b/1"));
            f.offer(trace(2, 3, "b/1"));
            f.offer(trace(3, 3, "b/1"));
            assertThat(f.counters()).containsExactly(3, 1, 2, 0);
            assertThat(Files.size(f.path())).isEqualTo(one.length());
        }
    }

    @Test
    @DisplayName("the sampled file is refused inside a git checkout (traces stay outside the working tree)")
    void outsideCheckout(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("repo/.git"));
        Path inside = dir.resolve("repo/traces");
        assertThatThrownBy(() -> new TraceFile(TraceSampling.every(1).withDirectory(inside)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inside the git checkout");
        try (TraceFile off = new TraceFile(TraceSampling.off().withDirectory(inside))) {
            assertThat(off.path()).isNull(); // off: nothing is created or checked
        }
    }
}
