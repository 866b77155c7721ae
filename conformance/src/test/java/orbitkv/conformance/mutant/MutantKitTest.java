package orbitkv.conformance.mutant;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.kit.ConformanceCommand;
import orbitkv.conformance.kit.InProcessTable;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.membership.Endpoint;
import orbitkv.membership.MembershipAdmin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * Issue 26 item 2: the conformance kit catches broken implementations. One real Manager on a real etcd; two
 * {@link WireRewriteProxy}s on loopback: one in front of the Manager's peer listener (the kit's
 * {@code --target-peer}), one in front of the kit's own listener (the address the kit's members advertise,
 * so the Manager's requester dials it). Each {@link Mutant} rewrites one side's frames; the kit (its
 * command, in-process) runs every session row of the table ({@code --only}: the proxies relay InventorySession only;
 * the transfer rows have {@code TransferMutantKitTest}) against it and exactly the rows of {@link #EXPECTED} must FAIL,
 * nothing else, within {@link #RUN_BOUND_MS}. The identity run (no rewrite) fails nothing. A mutant with an
 * empty expected set is a kit gap, documented in docs/conformance-kit.md ("Mutants").
 * Policy verdicts (rows reported but never failing the run) are not failures.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MutantKitTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    /** Each kit run's wall bound (also the kit's own --run-deadline-ms). */
    static final long RUN_BOUND_MS = 60_000;
    /** The Manager's idle liveness interval (the kit is told the same). */
    static final String LIVENESS_MS = "3000";
    /** The kit's bound of each wait for an answer. */
    static final String WAIT_MS = "2000";

    /** Mutant → the kit rows (side/scenario) that must FAIL against it; empty = kit gap. */
    static final Map<Mutant, Set<String>> EXPECTED = new EnumMap<>(Map.ofEntries(
            Map.entry(Mutant.SOURCE_WRONG_DIGEST, Rows.BOOTSTRAP),
            Map.entry(Mutant.SOURCE_SKIPPED_SEQUENCE, Rows.BOOTSTRAP),
            Map.entry(Mutant.SOURCE_IGNORES_CREDITS, Set.of("source/future_ack", "source/duplicate_ack", "source/foreign_session_frame")),
            Map.entry(Mutant.SOURCE_EXCEEDS_WINDOW, Rows.BOOTSTRAP),
            Map.entry(Mutant.SOURCE_NO_ERROR_ON_BAD_OPEN, Rows.BAD_OPEN),
            Map.entry(Mutant.SOURCE_COMMIT_BEFORE_S1, Rows.BOOTSTRAP),
            Map.entry(Mutant.SOURCE_PAGE_OUTSIDE_SCOPE, Rows.BOOTSTRAP),
            Map.entry(Mutant.SOURCE_LIVENESS_WRONG_HEAD, Set.of("source/idle_liveness")),
            Map.entry(Mutant.SOURCE_SNAPSHOT_NEVER_ENDS, Rows.BOOTSTRAP),
            Map.entry(Mutant.REQUESTER_STALE_INCARNATION, Rows.REQUESTER_ALL),
            Map.entry(Mutant.REQUESTER_ACK_BEYOND_RECEIVED, Rows.REQUESTER_ACK_READERS),
            Map.entry(Mutant.REQUESTER_NO_ERROR, Rows.REQUESTER_ERROR),
            Map.entry(Mutant.REQUESTER_WRONG_APPLIED_CURSOR, Set.of("requester/duplicate_delta", "requester/foreign_session_frame",
                    "requester/replaced_session_frame", "requester/staged_page_credit"))));

    /** Row sets shared by several mutants. */
    static final class Rows {
        /** The source rows that read a whole bootstrap first (every row after a valid Open). */
        static final Set<String> BOOTSTRAP = Set.of("source/second_open", "source/future_ack", "source/duplicate_ack",
                "source/foreign_session_frame", "source/replaced_session", "source/session_limit", "source/regenerate_above_sent",
                "source/idle_liveness");
        /** The source rows whose Open (or first frame) must be answered by an Error. */
        static final Set<String> BAD_OPEN = Set.of("source/wrong_protocol", "source/wrong_cluster", "source/stale_source_epoch",
                "source/unknown_source", "source/unknown_requester", "source/scope_digest_mismatch", "source/scope_257_namespaces",
                "source/scope_empty_namespace", "source/scope_missing", "source/open_over_64k", "source/garbage_bytes",
                "source/window_overflow", "source/epoch_overflow", "source/digest_short", "source/open_session_mismatch",
                "source/first_frame_not_open");
        /** The requester rows whose expected outcome is an Error from the target's requester. */
        static final Set<String> REQUESTER_ERROR = Set.of("requester/duplicate_frame_number", "requester/frame_number_gap",
                "requester/oversized_encoded", "requester/oversized_decoded", "requester/unknown_enum_medium", "requester/key_too_long",
                "requester/record_outside_interval", "requester/sequence_overflow", "requester/commit_without_pages",
                "requester/digest_mismatch", "requester/scope_digest_short", "requester/page_after_replay",
                "requester/source_left_membership");
        /** The requester rows that read the target's ACKs. */
        static final Set<String> REQUESTER_ACK_READERS = Set.of("requester/duplicate_delta", "requester/foreign_session_frame",
                "requester/replaced_session_frame", "requester/staged_page_credit", "requester/idle_ack_silence");
        /** Every requester row the kit runs against a target it does not own (requester_fenced is not observable). */
        static final Set<String> REQUESTER_ALL = java.util.stream.Stream.concat(REQUESTER_ERROR.stream(), Stream.of(
                "requester/overlapping_delta", "requester/delta_gap", "requester/duplicate_delta", "requester/foreign_session_frame",
                "requester/replaced_session_frame", "requester/staged_page_credit", "requester/idle_ack_silence"))
                .collect(java.util.stream.Collectors.toUnmodifiableSet());

        private Rows() {}
    }

    private final String cluster = "mut-" + UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger runs = new AtomicInteger();
    private Path work;
    private ManagerProcess manager;
    private WireRewriteProxy beforeSource;
    private WireRewriteProxy beforeKit;
    private int kitPort;

    @BeforeAll
    void start() throws Exception {
        assertThat(EXPECTED.keySet()).as("every mutant has an expected row set").containsExactlyInAnyOrder(Mutant.values());
        work = Files.createTempDirectory("orbitkv-mutants-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        manager = ManagerProcess.launch("m", work.resolve("logs"), ManagerProcess.distributedArgs(cluster, "m",
                ETCD.endpoints().toString(), Files.createDirectories(work.resolve("dram")), "--dram", "32MiB", "--block-bytes-max", "1MiB",
                "--idle-liveness-ms", LIVENESS_MS));
        manager.awaitReady();
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            kitPort = free.getLocalPort();
        }
        beforeSource = WireRewriteProxy.start(Endpoint.parse(manager.peer()));
        beforeKit = WireRewriteProxy.start(new Endpoint("127.0.0.1", kitPort));
    }

    @AfterAll
    void stop() throws Exception {
        if (beforeSource != null) {
            beforeSource.close();
        }
        if (beforeKit != null) {
            beforeKit.close();
        }
        if (manager != null) {
            manager.close();
        }
        ManagerProcess.deleteTree(work);
    }

    @Test
    @Timeout(120)
    @DisplayName("SES-4 SES-12 SNAP-7 DELTA-11: the kit through the rewrite proxies with no mutation fails no row")
    void identityFailsNothing() throws Exception {
        assertThat(runKit(null)).as("rows failed against the unmutated Manager").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Mutant.class)
    @Timeout(120)
    @DisplayName("SES-4 SES-5 SES-7 SES-11 SES-12 SES-13 SES-14 SNAP-7 DELTA-7 DELTA-11 IDX-11: the kit against a mutant fails exactly "
            + "the expected rows, within its bound")
    void kitCatchesMutant(Mutant mutant) throws Exception {
        assertThat(runKit(mutant)).as("rows failed against %s (%s)", mutant, mutant.breakage())
                .containsExactlyInAnyOrderElementsOf(EXPECTED.get(mutant));
    }

    /** Runs the kit through the proxies with {@code mutant}'s rewrite (null: identity); returns the failed rows. */
    private Set<String> runKit(Mutant mutant) throws Exception {
        beforeSource.rewriteWith(mutant != null && mutant.role() == Mutant.Role.SOURCE ? mutant.rewrite() : StreamRewrite::identity);
        beforeKit.rewriteWith(mutant != null && mutant.role() == Mutant.Role.REQUESTER ? mutant.rewrite() : StreamRewrite::identity);
        int run = runs.incrementAndGet();
        Path report = work.resolve("report-" + run + ".xml");
        List<String> args = new ArrayList<>(List.of("--target-peer", beforeSource.endpoint().toString(),
                "--target-http", manager.httpBase(), "--etcd", ETCD.endpoints().toString(), "--cluster", cluster,
                "--listen", "127.0.0.1:" + kitPort, "--advertise", beforeKit.endpoint().toString(), "--report", report.toString(),
                "--no-skip-policy", "--target-idle-liveness-ms", LIVENESS_MS, "--wait-ms", WAIT_MS, "--run-deadline-ms", Long.toString(RUN_BOUND_MS),
                "--member-prefix", "mk" + run,
                // the session rows only: the proxies relay InventorySession, not the transfer rows' Authorize (TransferMutantKitTest)
                "--only", String.join(",", InProcessTable.rows().stream().map(InProcessTable.Row::id).toList())));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        int exit = ConformanceCommand.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8)).execute(args.toArray(String[]::new));
        long millis = (System.nanoTime() - t0) / 1_000_000;
        String text = out.toString(StandardCharsets.UTF_8);
        System.out.printf("=== kit against %s: exit %d in %d ms%n%s", mutant == null ? "IDENTITY" : mutant, exit, millis, text);
        assertThat(millis).as("kit run wall time (ms)").isLessThanOrEqualTo(RUN_BOUND_MS);
        assertThat(exit).as("kit exit status (0 or 1; 2/3 are bad options or set-up)").isIn(0, 1);
        Set<String> failed = failedRows(report);
        assertThat(exit == 1).as("exit 1 iff a row failed").isEqualTo(!failed.isEmpty());
        return failed;
    }

    /** The side/scenario ids of the report's testcases with a {@code failure}. */
    static Set<String> failedRows(Path report) throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(report.toFile());
        NodeList cases = doc.getElementsByTagName("testcase");
        Set<String> failed = new TreeSet<>();
        for (int i = 0; i < cases.getLength(); i++) {
            Element c = (Element) cases.item(i);
            if (c.getElementsByTagName("failure").getLength() > 0) {
                failed.add(c.getAttribute("classname").substring("orbitkv.conformance.".length()) + "/"
                        + c.getAttribute("name").split(" ", 2)[0]);
            }
        }
        return failed;
    }
}
