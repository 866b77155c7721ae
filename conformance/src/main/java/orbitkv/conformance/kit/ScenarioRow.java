package orbitkv.conformance.kit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One row of {@code tables/session/adversarial.table} (the same file the in-process
 * {@code AdversarialTableTest} runs; the build copies it into this package): which end of the target is
 * under test, the scenario, the expected wire outcome, the rule IDs it checks and, for a row whose outcome
 * depends on this implementation's policy rather than the protocol, its {@code policy:NAME} tags.
 *
 * @param side {@code source} (the kit is a requester talking to the target's source) or {@code requester}
 * @param scenario the scenario name
 * @param expected the outcome token (docs/conformance-kit.md lists them)
 * @param rules the rule IDs cited by the row
 * @param policies the row's {@code policy:NAME} tags (empty: the row checks the protocol only)
 * @param permission for a row tagged {@code may:NAME}, the design's words that permit other behaviour than the
 *     expected one, quoted in the row's comment (e.g. SES-14 "may return its credit"): the row is a policy row,
 *     reported POLICY-PASS or POLICY-DIFFERS and never failing the run on the permitted difference
 * @param comment the row's description
 */
record ScenarioRow(String side, String scenario, String expected, List<String> rules, List<String> policies,
        Optional<String> permission, String comment) {
    static final String RESOURCE = "adversarial.table";
    /** The transfer rows (issue 40 item 5): the kit's own table, run after the session rows. */
    static final String TRANSFER_RESOURCE = "transfer.table";
    private static final Pattern RULE = Pattern.compile("^(INV|MEM|PUB|SES|DELTA|SNAP|IDX|API|BND|ROUTE|DIAG|OPS|PERF)-\\d+$");
    private static final Pattern POLICY = Pattern.compile("^policy:[a-z-]+$");
    private static final Pattern MAY = Pattern.compile("^may:[a-z-]+$");
    private static final Pattern QUOTE = Pattern.compile("\"([^\"]+)\"");

    ScenarioRow {
        if (!side.equals("source") && !side.equals("requester") && !side.equals("transfer")) {
            throw new IllegalArgumentException("side must be source, requester or transfer, got '" + side + "'");
        }
        if (rules.isEmpty()) {
            throw new IllegalArgumentException(side + "/" + scenario + " cites no rule ID");
        }
        rules = List.copyOf(rules);
        policies = List.copyOf(policies);
        java.util.Objects.requireNonNull(permission, "permission (Optional.empty() for a normative row)");
    }

    String id() {
        return side + "/" + scenario;
    }

    /** The rows of the tables packaged with the kit: the session table, then the transfer table. */
    static List<ScenarioRow> load() {
        List<ScenarioRow> rows = new ArrayList<>(load(RESOURCE));
        rows.addAll(load(TRANSFER_RESOURCE));
        return List.copyOf(rows);
    }

    private static List<ScenarioRow> load(String resource) {
        try (InputStream in = ScenarioRow.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the scenario table " + resource + " is missing from the kit");
            }
            return parse(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)).lines().toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Parses table lines: {@code side | scenario | expected   # RULE-ID... [policy:NAME] comment}. */
    static List<ScenarioRow> parse(List<String> lines) {
        List<ScenarioRow> rows = new ArrayList<>();
        for (String line : lines) {
            String body = line.strip();
            if (body.isEmpty() || body.startsWith("#")) {
                continue;
            }
            int hash = body.indexOf('#');
            String[] cells = (hash < 0 ? body : body.substring(0, hash)).split("\\|");
            if (cells.length != 3) {
                throw new IllegalArgumentException("table row needs 3 cells: " + line);
            }
            List<String> rules = new ArrayList<>();
            List<String> policies = new ArrayList<>();
            String may = null;
            StringBuilder comment = new StringBuilder();
            if (hash >= 0) {
                for (String token : body.substring(hash + 1).strip().split("\\s+")) {
                    Matcher r = RULE.matcher(token);
                    if (comment.isEmpty() && r.matches()) {
                        rules.add(token);
                    } else if (comment.isEmpty() && POLICY.matcher(token).matches()) {
                        policies.add(token);
                    } else if (comment.isEmpty() && may == null && MAY.matcher(token).matches()) {
                        may = token;
                    } else {
                        comment.append(comment.isEmpty() ? "" : " ").append(token);
                    }
                }
            }
            Optional<String> permission = Optional.empty();
            if (may != null) {
                Matcher q = QUOTE.matcher(comment);
                if (!q.find()) {
                    throw new IllegalArgumentException("a " + may + " row must quote the design's words in its comment: " + line);
                }
                permission = Optional.of(String.join(" ", rules) + " \"" + q.group(1) + "\" (" + may + ")");
            }
            rows.add(new ScenarioRow(cells[0].strip(), cells[1].strip(), cells[2].strip(), rules, policies, permission,
                    comment.toString()));
        }
        return rows;
    }
}
