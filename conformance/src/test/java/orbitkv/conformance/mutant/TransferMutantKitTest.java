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
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.conformance.kit.ConformanceCommand;
import orbitkv.conformance.manager.ManagerProcess;
import orbitkv.conformance.session.KitBlackBoxTest;
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

/**
 * Issue 40 item 5: the kit's transfer rows catch broken transfer implementations. One real Manager on a real etcd
 * (grant expiry {@value #GRANT_EXPIRY_MS} ms); an {@link AuthorizeRewriteProxy} in front of its peer listener (the
 * kit's {@code --target-peer}) and a {@link DataRewriteProxy} in front of its data listener (the Manager advertises the
 * proxy in its grants, {@code --transfer-data-advertise}). Each {@link TransferMutant} rewrites one kind of answer; the
 * kit (its command, in-process, {@code --only} the transfer rows) runs against it and exactly the rows of
 * {@link #EXPECTED} must FAIL, nothing else, within {@link #RUN_BOUND_MS}; the identity run passes every row.
 */
@Tag("gate")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransferMutantKitTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    static final long RUN_BOUND_MS = 60_000;
    static final String WAIT_MS = "2000";
    /** Short, so the grant_expiry row waits seconds; a quarter of it (the understated expiry) plus 1 s is still before it. */
    static final long GRANT_EXPIRY_MS = 4_000;

    /** Mutant → the transfer rows that must FAIL against it. */
    static final Map<TransferMutant, Set<String>> EXPECTED = new EnumMap<>(Map.of(
            TransferMutant.AUTHORIZE_REFUSALS_UNNAMED, Set.of("transfer/authorize_wrong_protocol", "transfer/authorize_wrong_cluster",
                    "transfer/authorize_stale_source", "transfer/authorize_wrong_source", "transfer/authorize_unknown_requester",
                    "transfer/authorize_unknown_intent", "transfer/authorize_duplicate_key"),
            TransferMutant.AUTHORIZE_GENERATION_UNNAMED, Set.of("transfer/stale_generation"),
            TransferMutant.AUTHORIZE_EXPIRY_UNDERSTATED, Set.of("transfer/grant_expiry"),
            TransferMutant.RELEASE_BY_ANYONE, Set.of("transfer/release_other_requester"),
            TransferMutant.DATA_SERVES_TWICE, Set.of("transfer/already_read"),
            TransferMutant.DATA_CORRUPT_PAYLOAD, Set.of("transfer/read_granted", "transfer/already_read",
                    "transfer/release_other_requester", "transfer/data_authorize_read", "transfer/data_authorize_oversized",
                    "transfer/data_authorize_malformed_body"),
            TransferMutant.DATA_GRANT_UNKNOWN_UNNAMED, Set.of("transfer/grant_unknown", "transfer/release_then_read",
                    "transfer/grant_expiry"),
            TransferMutant.DATA_MALFORMED_STAYS_OPEN, Set.of("transfer/malformed_frame")));

    private final String cluster = "xmut-" + UUID.randomUUID().toString().substring(0, 8);
    private final AtomicInteger runs = new AtomicInteger();
    private Path work;
    private ManagerProcess manager;
    private AuthorizeRewriteProxy beforePeer;
    private DataRewriteProxy beforeData;
    private List<String> transferRows;

    @BeforeAll
    void start() throws Exception {
        assertThat(EXPECTED.keySet()).as("every mutant has an expected row set").containsExactlyInAnyOrder(TransferMutant.values());
        transferRows = KitBlackBoxTest.transferRowIds();
        work = Files.createTempDirectory("orbitkv-transfer-mutants-");
        try (MembershipAdmin admin = MembershipAdmin.connect(ETCD.endpoints(), cluster, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            assertThat(admin.format()).isInstanceOf(MembershipAdmin.Formatted.class);
        }
        int dataPort;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            dataPort = free.getLocalPort();
        }
        beforeData = DataRewriteProxy.start(new Endpoint("127.0.0.1", dataPort));
        manager = ManagerProcess.launch("m", work.resolve("logs"), ManagerProcess.distributedArgs(cluster, "m",
                ETCD.endpoints().toString(), Files.createDirectories(work.resolve("dram")), "--dram", "32MiB", "--block-bytes-max", "1MiB",
                "--transfer-data-port", Integer.toString(dataPort), "--transfer-data-advertise", beforeData.endpoint().toString(),
                "--transfer-grant-expiry-ms", Long.toString(GRANT_EXPIRY_MS)));
        manager.awaitReady();
        beforePeer = AuthorizeRewriteProxy.start(Endpoint.parse(manager.peer()));
    }

    @AfterAll
    void stop() throws Exception {
        if (beforePeer != null) {
            beforePeer.close();
        }
        if (beforeData != null) {
            beforeData.close();
        }
        if (manager != null) {
            manager.close();
        }
        ManagerProcess.deleteTree(work);
    }

    @Test
    @Timeout(120)
    @DisplayName("INV-2 INV-9 ROUTE-8 BND-1: the kit's transfer rows through the rewrite proxies with no mutation pass every row")
    void identityPassesEveryTransferRow() throws Exception {
        assertThat(runKit(null)).as("transfer rows failed against the unmutated Manager").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(TransferMutant.class)
    @Timeout(120)
    @DisplayName("INV-2 INV-3 INV-8 INV-9 ROUTE-8 BND-1: the kit against a transfer mutant fails exactly the expected rows")
    void kitCatchesTransferMutant(TransferMutant mutant) throws Exception {
        assertThat(runKit(mutant)).as("rows failed against %s (%s)", mutant, mutant.breakage())
                .containsExactlyInAnyOrderElementsOf(EXPECTED.get(mutant));
    }

    /** Runs the kit's transfer rows through the proxies with {@code mutant}'s rewrite (null: identity); returns the failed rows. */
    private Set<String> runKit(TransferMutant mutant) throws Exception {
        beforePeer.rewriteWith(mutant);
        beforeData.rewriteWith(mutant);
        int run = runs.incrementAndGet();
        Path report = work.resolve("report-" + run + ".xml");
        List<String> args = new ArrayList<>(List.of("--target-peer", beforePeer.endpoint().toString(),
                "--target-http", manager.httpBase(), "--etcd", ETCD.endpoints().toString(), "--cluster", cluster,
                "--listen", "127.0.0.1:0", "--report", report.toString(), "--wait-ms", WAIT_MS,
                "--run-deadline-ms", Long.toString(RUN_BOUND_MS), "--member-prefix", "xk" + run, "--only", String.join(",", transferRows)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        int exit = ConformanceCommand.commandLine(new PrintStream(out, true, StandardCharsets.UTF_8)).execute(args.toArray(String[]::new));
        long millis = (System.nanoTime() - t0) / 1_000_000;
        String text = out.toString(StandardCharsets.UTF_8);
        System.out.printf("=== kit transfer rows against %s: exit %d in %d ms%n%s", mutant == null ? "IDENTITY" : mutant, exit, millis, text);
        assertThat(millis).as("kit run wall time (ms)").isLessThanOrEqualTo(RUN_BOUND_MS);
        assertThat(exit).as("kit exit status (0 or 1; 2/3 are bad options or set-up): %s", text).isIn(0, 1);
        Set<String> failed = MutantKitTest.failedRows(report);
        assertThat(exit == 1).as("exit 1 iff a row failed").isEqualTo(!failed.isEmpty());
        Matcher summary = Pattern.compile("(\\d+) scenarios: (\\d+) passed, (\\d+) failed, (\\d+) not applicable").matcher(text);
        assertThat(summary.find()).as("summary line").isTrue();
        assertThat(Integer.parseInt(summary.group(1))).as("every transfer row ran").isEqualTo(transferRows.size());
        assertThat(summary.group(4)).as("no transfer row is N/A against a Manager").isEqualTo("0");
        return failed;
    }
}
