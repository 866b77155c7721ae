package orbitkv.conformance.kit;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.conformance.peer.AdversarialSource;
import orbitkv.inventory.Namespace;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;

/**
 * One black-box conformance run against a target given by address only (docs/conformance-kit.md): check
 * that the target is a v4 member of the named cluster, start the kit's listener, run every table row (or
 * the {@code --only} ones) and give each exactly one verdict, then deregister the kit's members, evict the
 * kit's blocks and write the report.
 */
final class KitRun {
    /** A problem before any scenario could run (target or etcd unreachable, another cluster, bad table). */
    static final class SetupException extends Exception {
        SetupException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final KitSettings settings;
    private final PrintStream out;

    KitRun(KitSettings settings, PrintStream out) {
        this.settings = settings;
        this.out = out;
    }

    KitReport run() throws SetupException, InterruptedException {
        List<ScenarioRow> rows = selectedRows();
        TargetApi api = new TargetApi(settings.targetHttp());
        JsonNode status = targetStatus(api);
        Incarnation target = Incarnation.parse(status.at("/self/incarnation").asText());
        UUID clusterUuid = UUID.fromString(status.at("/cluster/uuid").asText());
        String runId = HexFormat.of().toHexDigits(new SecureRandom().nextInt());
        String kitNamespace = settings.memberPrefix() + "-" + runId;
        out.printf("orbitkv conformance: target %s (peer %s, http %s), cluster %s %s, %d scenarios%n", target,
                settings.targetPeer(), settings.targetHttp(), settings.cluster(), clusterUuid, rows.size());

        KitReport report = new KitReport(out);
        AdversarialSource listener = listen();
        Endpoint advertised = settings.advertise().orElse(listener.endpoint());
        out.printf("orbitkv conformance: kit listener %s, advertised as %s, member prefix %s, kit namespace %s, peer %s%n",
                listener.endpoint(), advertised, settings.memberPrefix(), kitNamespace,
                settings.peerTls().map(t -> "mutual TLS (" + t.dir() + ")").orElse("plaintext"));
        try (KitMembers members = new KitMembers(settings.etcd(), settings.cluster(), settings.memberPrefix(), advertised, clusterUuid);
                SessionRouter router = new SessionRouter(listener, target, settings.answerBound());
                TargetFence fencing = settings.allowFencing() ? new TargetFence(settings.etcd(), settings.cluster(),
                        settings.answerBound()) : null) {
            Optional<TargetFaults> fence = Optional.ofNullable(fencing);
            HttpTargetStatus http = new HttpTargetStatus(api);
            SourceScenarios sources = new SourceScenarios(settings.profile(), http, http, members, target, kitNamespace, fence);
            RequesterScenarios requesters = requesterNamespace(status, kitNamespace)
                    .map(ns -> new RequesterScenarios(settings.profile(), http, members, router, target, ns, fence)).orElse(null);
            TransferScenarios transfers = new TransferScenarios(settings, api, target, clusterUuid, kitNamespace, sources::requester);
            boolean sourcesReady = false;
            long runEnd = System.nanoTime() + settings.runDeadline().toNanos();
            try {
                for (ScenarioRow row : ordered(rows)) {
                    long t0 = System.nanoTime();
                    Duration runLeft = Duration.ofNanos(Math.max(0, runEnd - t0));
                    Duration budget = runLeft.compareTo(settings.rowDeadline()) < 0 ? runLeft : settings.rowDeadline();
                    Verdict v;
                    if (runLeft.isZero()) {
                        v = new Verdict.Failed("not started: the run deadline of " + settings.runDeadline().toMillis()
                                + " ms (--run-deadline-ms) passed");
                    } else if (!row.policies().isEmpty() && settings.skipPolicy()) {
                        v = new Verdict.NotApplicable("not applicable: " + String.join(" ", row.policies()) + " row (this "
                                + "implementation's policy, not the protocol) skipped by --skip-policy");
                    } else if (FENCING_ROWS.contains(row.id()) && !settings.allowFencing()) {
                        v = new Verdict.NotApplicable("not applicable: fencing the target (revoking its member lease in etcd) "
                                + "is destructive; give --allow-fencing to run this row");
                    } else if (row.side().equals("source") || row.side().equals("transfer")) {
                        if (!sourcesReady) { // the transfer rows use the source rows' requester members and saved blocks
                            setUpSources(sources);
                            sourcesReady = true;
                        }
                        v = sourceSide(row, budget, sources, transfers);
                    } else if (requesters == null) {
                        v = new Verdict.NotApplicable("not applicable: the target subscribes to no namespace (empty scope), so it "
                                + "opens no session to the kit source");
                    } else {
                        v = RowRunner.run(row, budget, (deadline, seen) -> requesters.run(row, deadline, seen), requesters::cancel);
                    }
                    report.add(row, v, (System.nanoTime() - t0) / 1_000_000);
                }
            } finally {
                if (sourcesReady) {
                    sources.tearDown();
                }
            }
        } finally {
            listener.close();
        }
        report.writeJUnitXml(settings.report(), target + " peer " + settings.targetPeer() + " http " + settings.targetHttp());
        out.println(report.summary(settings.report()));
        return report;
    }

    /** A {@code source} or {@code transfer} row: the kit is the requester of the target's source end. */
    private static Verdict sourceSide(ScenarioRow row, Duration budget, SourceScenarios sources, TransferScenarios transfers)
            throws InterruptedException {
        return row.side().equals("transfer")
                ? RowRunner.run(row, budget, (deadline, seen) -> transfers.run(row, deadline, seen), transfers::cancel)
                : RowRunner.run(row, budget, (deadline, seen) -> sources.run(row, deadline, seen), sources::cancel);
    }

    /** The target's status, checked for this kit's protocol and the cluster named by {@code --cluster}. */
    private JsonNode targetStatus(TargetApi api) throws SetupException {
        JsonNode status;
        try {
            status = api.status();
        } catch (RuntimeException e) {
            throw new SetupException("the target's HTTP API v1 at " + settings.targetHttp() + " does not answer status: "
                    + e.getMessage(), e);
        }
        requireText(status, "/protocol", ClusterIdentity.PROTOCOL, "the target's protocol");
        requireText(status, "/cluster/name", settings.cluster(), "the target's cluster name (--cluster)");
        return status;
    }

    /** The kit's own peer listener on {@code --listen}. */
    private AdversarialSource listen() throws SetupException {
        try {
            return settings.peerTls().isEmpty() ? AdversarialSource.start(settings.listen())
                    : AdversarialSource.start(settings.listen(), settings.peerTls().get().files(settings.memberPrefix() + "-src"));
        } catch (java.io.IOException e) {
            throw new SetupException("cannot listen on " + settings.listen() + ": " + e.getMessage(), e);
        }
    }

    private void setUpSources(SourceScenarios sources) throws SetupException, InterruptedException {
        try {
            sources.setUp();
        } catch (RuntimeException | AssertionError e) {
            throw new SetupException("cannot prepare the source scenarios (register the kit's requesters in etcd "
                    + settings.etcd() + ", save the kit's blocks on the target): " + e.getMessage(), e);
        }
    }

    private List<ScenarioRow> selectedRows() throws SetupException {
        List<ScenarioRow> all;
        try {
            all = ScenarioRow.load();
        } catch (RuntimeException e) {
            throw new SetupException("the scenario table is unreadable: " + e.getMessage(), e);
        }
        if (settings.only().isEmpty()) {
            return all;
        }
        List<ScenarioRow> picked = all.stream().filter(r -> settings.only().contains(r.id())).toList();
        List<String> unknown = settings.only().stream().filter(id -> all.stream().noneMatch(r -> r.id().equals(id))).toList();
        if (!unknown.isEmpty()) {
            throw new SetupException("--only names unknown scenarios " + unknown + " (ids are side/scenario, e.g. source/wrong_protocol)",
                    null);
        }
        return picked;
    }

    /** The namespace the kit source serves in: the kit's own if the target subscribes to all, else its first one. */
    private static Optional<Namespace> requesterNamespace(JsonNode status, String kitNamespace) {
        JsonNode ns = status.at("/scope/namespaces");
        if (ns.isTextual() && ns.asText().equals("all")) {
            return Optional.of(Namespace.utf8(kitNamespace));
        }
        return ns.isArray() && !ns.isEmpty() ? Optional.of(Namespace.utf8(ns.get(0).asText())) : Optional.empty();
    }

    private static void requireText(JsonNode status, String pointer, String expected, String what) throws SetupException {
        String actual = status.at(pointer).asText();
        if (!actual.equals(expected)) {
            throw new SetupException(what + " is '" + actual + "', expected '" + expected + "'", null);
        }
    }

    /** Rows that fence the target: run only with --allow-fencing, and last (the target is a new incarnation after). */
    static final List<String> FENCING_ROWS = List.of("requester/requester_fenced", "source/fenced_source");

    /**
     * The rows in table order, fencing rows last and in {@link #FENCING_ROWS} order: a fenced target heals as a
     * new incarnation (or stays fenced), and the requester row needs the target's sessions to the kit source,
     * which only the incarnation the run started with opens.
     */
    static List<ScenarioRow> ordered(List<ScenarioRow> rows) {
        List<ScenarioRow> out = new ArrayList<>(rows.stream().filter(r -> !FENCING_ROWS.contains(r.id())).toList());
        for (String id : FENCING_ROWS) {
            rows.stream().filter(r -> r.id().equals(id)).forEach(out::add);
        }
        return out;
    }
}
