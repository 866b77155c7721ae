package orbitkv.conformance.kit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.docs.MarkdownTable;
import org.junit.jupiter.api.Tag;
import picocli.CommandLine;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The kit's command line, its table, and its report, without a target. */
@Tag("unit")
class ConformanceCommandTest {
    record Run(int exit, String out, String err) {}

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        CommandLine cl = ConformanceCommand.commandLine(ps);
        cl.setOut(new PrintWriter(ps, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString());
    }

    @Test
    @DisplayName("--help documents every option with a description, the exit statuses, and exits 0")
    void helpDocumentsEveryOption() {
        Run r = run("--help");
        assertThat(r.exit()).isZero();
        CommandLine.Model.CommandSpec spec = new CommandLine(new ConformanceCommand()).getCommandSpec();
        for (CommandLine.Model.OptionSpec o : spec.options()) {
            String shown = o.negatable() ? o.longestName().replaceFirst("^--", "--[no-]") : o.longestName();
            assertThat(r.out()).as("help names %s", o.longestName()).contains(shown);
            assertThat(String.join(" ", o.description())).as("description of %s", o.longestName()).isNotBlank();
        }
        assertThat(r.out()).contains("Exit status:", "every applicable scenario passed", "docs/conformance-kit.md");
    }

    @ParameterizedTest(name = "{0}")
    @DisplayName("bad option values are refused with exit 2 and a message naming the option; nothing runs")
    @CsvSource(delimiter = '|', textBlock = """
            missing target          | --etcd http://127.0.0.1:1 --cluster c --target-http http://127.0.0.1:1                          | --target-peer
            peer without port       | --target-peer host --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c    | --target-peer
            http not a URL          | --target-peer 127.0.0.1:1 --target-http ftp://x --etcd http://127.0.0.1:1 --cluster c       | --target-http
            bad cluster name        | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster a/b | --cluster
            listen port out of range| --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --listen 127.0.0.1:70000 | --listen
            wildcard without advertise | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --listen 0.0.0.0:0 | --advertise
            size not a size         | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --target-frame-encoded-bytes-max 1MB | --target-frame-encoded-bytes-max
            encoded above decoded   | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --target-frame-encoded-bytes-max 8MiB | --target-frame-decoded-bytes-max
            half of etcd TLS        | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --etcd-ca /x | --etcd-cert
            half of peer TLS        | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --peer-tls-dir /x | --peer-tls-ca-file
            peer TLS CA unreadable  | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --peer-tls-dir /nonexistent --peer-tls-ca-file /nonexistent/ca.pem | --peer-tls-ca-file /nonexistent/ca.pem is not a readable file
            wait too short          | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --wait-ms 5 | --wait-ms
            row deadline too short  | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --row-deadline-ms 500 | --row-deadline-ms must be 1000..3600000
            row deadline below 2 waits | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --row-deadline-ms 9000 | at least twice --wait-ms
            row deadline below liveness | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --wait-ms 1000 --row-deadline-ms 2000 --target-idle-liveness-ms 5000 | plus --wait-ms
            run deadline below row  | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --run-deadline-ms 20000 | --run-deadline-ms must be at least --row-deadline-ms
            run deadline above a day| --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --run-deadline-ms 86400001 | --run-deadline-ms
            row deadline not a number | --target-peer 127.0.0.1:1 --target-http http://127.0.0.1:1 --etcd http://127.0.0.1:1 --cluster c --row-deadline-ms soon | --row-deadline-ms
            """)
    void badValues(String name, String args, String named) {
        Run r = run(args.strip().split("\\s+"));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).contains(named);
        assertThat(r.out()).doesNotContain("scenarios:");
    }

    @Test
    @DisplayName("an unreachable target is a set-up failure: exit 3, a message naming the URL, no report")
    void unreachableTarget() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        Path report = Files.createTempDirectory("kit-report").resolve("r.xml");
        Run r = run("--target-peer", "127.0.0.1:" + port, "--target-http", "http://127.0.0.1:" + port, "--etcd", "http://127.0.0.1:" + port,
                "--cluster", "c", "--report", report.toString(), "--wait-ms", "500");
        assertThat(r.exit()).isEqualTo(ConformanceCommand.EXIT_SETUP);
        assertThat(r.err()).contains("set-up failed", "http://127.0.0.1:" + port);
        assertThat(report).doesNotExist();
    }

    @Test
    @DisplayName("the packaged table is the in-process table: every row parses with its rule IDs; policy tags come from the documented list")
    void packagedTable() throws IOException {
        List<ScenarioRow> all = ScenarioRow.load();
        List<ScenarioRow> rows = all.stream().filter(r -> !r.side().equals("transfer")).toList();
        List<String> file = Files.readAllLines(MarkdownTable.root().resolve("conformance/src/test/resources/tables/session/adversarial.table"));
        assertThat(rows).isEqualTo(ScenarioRow.parse(file));
        assertThat(rows).hasSize(48);
        assertThat(all.subList(48, all.size())).as("the transfer table follows the session table (issue 40 item 5)")
                .hasSize(23).allSatisfy(r -> assertThat(r.side()).isEqualTo("transfer"));
        assertThat(rows).allSatisfy(r -> assertThat(r.rules()).isNotEmpty());
        assertThat(rows.stream().filter(r -> !r.policies().isEmpty()).map(ScenarioRow::id))
                .containsExactly("requester/oversized_decoded");
        assertThat(rows.stream().filter(r -> r.permission().isPresent()).map(ScenarioRow::id))
                .containsExactly("requester/staged_page_credit", "requester/idle_ack_silence");
        assertThat(documentedPolicyTags()).containsAll(rows.stream().flatMap(r -> r.policies().stream()).toList());
    }

    /**
     * Every policy tag used in any table under tables/ is listed in docs/conformance-kit.md (between the
     * policy-tags markers), and every listed tag is used: the docs and the tables cannot drift apart.
     */
    @Test
    @DisplayName("policy tags in the tables equal the list in docs/conformance-kit.md")
    void policyTagsAreDocumented() throws IOException {
        Set<String> used = new TreeSet<>();
        Pattern tag = Pattern.compile("\\s(policy:[a-z-]+)");
        try (var files = Files.walk(MarkdownTable.root().resolve("conformance/src/test/resources"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".table")).toList()) {
                for (String line : Files.readAllLines(f)) {
                    int hash = line.indexOf(" # ");
                    if (line.startsWith("#") || hash < 0) {
                        continue;
                    }
                    Matcher m = tag.matcher(line.substring(hash));
                    while (m.find()) {
                        used.add(m.group(1));
                    }
                }
            }
        }
        assertThat(used).isEqualTo(documentedPolicyTags());
    }

    static Set<String> documentedPolicyTags() {
        Set<String> tags = new TreeSet<>();
        for (List<String> row : MarkdownTable.rows(MarkdownTable.root().resolve("docs/conformance-kit.md"), "policy-tags")) {
            tags.add(row.get(0).replace("`", ""));
        }
        return tags;
    }

    @Test
    @DisplayName("the report: one line per scenario, a summary, JUnit XML with failure and skipped elements; exit 0 only without failures")
    void report() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        KitReport report = new KitReport(new PrintStream(out, true, StandardCharsets.UTF_8));
        List<ScenarioRow> rows = ScenarioRow.load();
        report.add(rows.get(0), new Verdict.Passed("error:PROTOCOL_MISMATCH"), 3);
        report.add(rows.get(1), new Verdict.Failed("expected error:CLUSTER_MISMATCH, got nothing"), 5);
        report.add(rows.get(5), new Verdict.NotObservable("not observable black-box: why"), 0);
        assertThat(report.passed()).isFalse();
        Path file = Files.createTempDirectory("kit-report").resolve("r.xml");
        report.writeJUnitXml(file, "t");
        String xml = Files.readString(file);
        assertThat(xml).contains("tests=\"3\"", "failures=\"1\"", "skipped=\"1\"", "<failure message=\"expected error:CLUSTER_MISMATCH",
                "<skipped message=\"not observable black-box: why\"");
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).hasSize(3).anySatisfy(l -> assertThat(l).startsWith("FAIL")
                .contains("source/wrong_cluster", "[SES-4]"));
        KitReport ok = new KitReport(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        ok.add(rows.get(0), new Verdict.Passed("x"), 1);
        ok.add(rows.get(5), new Verdict.NotApplicable("not applicable: y"), 1);
        assertThat(ok.passed()).isTrue();
    }

    @Test
    @DisplayName("SES-14 DELTA-12 policy rows are reported apart: POLICY-DIFFERS never fails the run and is a skipped testcase; the summary counts policy rows")
    void policyRowsReportedApart() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        KitReport report = new KitReport(new PrintStream(out, true, StandardCharsets.UTF_8));
        List<ScenarioRow> rows = ScenarioRow.load();
        report.add(rows.get(0), new Verdict.Passed("error:PROTOCOL_MISMATCH"), 3);
        ScenarioRow staged = rows.stream().filter(r -> r.id().equals("requester/staged_page_credit")).findFirst().orElseThrow();
        ScenarioRow idle = rows.stream().filter(r -> r.id().equals("requester/idle_ack_silence")).findFirst().orElseThrow();
        report.add(staged, RowRunner.verdict(staged, "nothing within 5000 ms"), 5000);
        report.add(idle, RowRunner.verdict(idle, "silent"), 300);
        assertThat(report.passed()).isTrue();
        Path file = Files.createTempDirectory("kit-report").resolve("r.xml");
        String summary = report.summary(file);
        assertThat(summary).contains("3 scenarios: 1 passed, 0 failed, 0 not applicable, 0 not observable black-box; "
                + "policy rows 2 (1 as this implementation, 1 differ)");
        report.writeJUnitXml(file, "t");
        String xml = Files.readString(file);
        assertThat(xml).contains("failures=\"0\"", "skipped=\"1\"", "POLICY-DIFFERS (permitted by the design",
                "may return its credit while the installed watermark stays where it is.", "POLICY-PASS silent");
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).anySatisfy(l -> assertThat(l).startsWith("POLICY-DIFFERS")
                .contains("requester/staged_page_credit", "SES-14 \"A page copied into budgeted staging may return its credit"));
    }

    @Test
    @DisplayName("SES-14 DELTA-12 every may: row quotes docs/design.md verbatim and is listed in docs/conformance-kit.md's may-rows table")
    void mayRowsQuoteTheDesign() throws IOException {
        String design = Files.readString(MarkdownTable.root().resolve("docs/design.md"));
        Set<String> documented = new TreeSet<>();
        for (List<String> row : MarkdownTable.rows(MarkdownTable.root().resolve("docs/conformance-kit.md"), "may-rows")) {
            documented.add(row.get(0).replace("`", ""));
        }
        Set<String> tagged = new TreeSet<>();
        Pattern quote = Pattern.compile("\"([^\"]+)\"");
        for (ScenarioRow r : ScenarioRow.load()) {
            if (r.permission().isPresent()) {
                tagged.add(r.id());
                Matcher m = quote.matcher(r.permission().get());
                assertThat(m.find()).isTrue();
                assertThat(design).as("%s quotes the design", r.id()).contains(m.group(1));
            }
        }
        assertThat(tagged).isEqualTo(documented);
    }

    @Test
    @DisplayName("INV-2 INV-9 ROUTE-8 BND-1 every transfer row cites rule IDs, expects a known outcome kind and names a scenario the kit runs")
    void transferRowsAreRunnable() {
        List<ScenarioRow> transfer = ScenarioRow.load().stream().filter(r -> r.side().equals("transfer")).toList();
        assertThat(transfer.stream().map(ScenarioRow::scenario)).containsExactlyInAnyOrderElementsOf(TransferScenarios.SCENARIOS);
        assertThat(transfer).allSatisfy(r -> {
            assertThat(r.rules()).isNotEmpty();
            assertThat(r.policies()).isEmpty();
            assertThat(r.expected()).matches("(refused|block|read|closed|release|closed-refused):[A-Z_]+");
        });
    }

    @Test
    @DisplayName("BND-1 the kit's AUTHORIZE frame is the documented 40-byte header (type 3, the announced length unsigned at offset 24, the request id at 32), then the body")
    void authorizeFrameLayout() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
                DataWire wire = DataWire.connect(new orbitkv.membership.Endpoint("127.0.0.1", server.getLocalPort()),
                        java.util.Optional.empty(), "kit", java.time.Duration.ofSeconds(5));
                java.net.Socket accepted = server.accept()) {
            wire.authorize(TransferScenarios.AUTHORIZE_ANNOUNCED_OVERSIZED, new byte[] {9, 8}, 0x0102030405060708L);
            wire.authorize(0xffff_fffeL, new byte[0], 7);
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(accepted.getInputStream().readNBytes(DataWire.REQUEST_BYTES * 2 + 2));
            assertThat(b.getInt()).isEqualTo(DataWire.MAGIC);
            assertThat(new byte[] {b.get(), b.get(), b.get(), b.get()}).containsExactly(1, 3, 0, 0);
            assertThat(new long[] {b.getLong(), b.getLong()}).containsOnly(0L);
            assertThat(Integer.toUnsignedLong(b.getInt())).isEqualTo(Integer.MAX_VALUE);
            assertThat(b.getInt()).isZero();
            assertThat(b.getLong()).isEqualTo(0x0102030405060708L);
            assertThat(new byte[] {b.get(), b.get()}).containsExactly(9, 8);
            assertThat(Integer.toUnsignedLong(b.getInt(DataWire.REQUEST_BYTES + 2 + 24))).as("unsigned 32-bit length").isEqualTo(0xffff_fffeL);
            assertThat(b.getLong(DataWire.REQUEST_BYTES + 2 + 32)).isEqualTo(7);
        }
    }

    @Test
    @DisplayName("INV-7 --allow-fencing is opt-in; the fencing rows run last; --row-deadline-ms and --run-deadline-ms have their defaults")
    void fencingAndDeadlineOptions() {
        ConformanceCommand c = new ConformanceCommand();
        new CommandLine(c).parseArgs("--target-peer", "127.0.0.1:1", "--target-http", "http://127.0.0.1:1", "--etcd",
                "http://127.0.0.1:1", "--cluster", "c");
        KitSettings s = c.settings();
        assertThat(s.allowFencing()).isFalse();
        assertThat(s.rowDeadline()).isEqualTo(java.time.Duration.ofMillis(KitSettings.ROW_DEADLINE_MS_DEFAULT)).hasSeconds(30);
        assertThat(s.runDeadline()).isEqualTo(java.time.Duration.ofMinutes(10));
        List<ScenarioRow> ordered = KitRun.ordered(ScenarioRow.load());
        assertThat(ordered).hasSize(71);
        assertThat(ordered.subList(69, 71).stream().map(ScenarioRow::id)).containsExactlyElementsOf(KitRun.FENCING_ROWS);
    }
}
