package orbitkv.conformance.kit;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintStream;
import java.security.SecureRandom;
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
        JsonNode status;
        try {
            status = api.status();
        } catch (RuntimeException e) {
            throw new SetupException("the target's HTTP API v1 at " + settings.targetHttp() + " does not answer status: "
                    + e.getMessage(), e);
        }
        requireText(status, "/protocol", ClusterIdentity.PROTOCOL, "the target's protocol");
        requireText(status, "/cluster/name", settings.cluster(), "the target's cluster name (--cluster)");
        Incarnation target = Incarnation.parse(status.at("/self/incarnation").asText());
        UUID clusterUuid = UUID.fromString(status.at("/cluster/uuid").asText());
        String runId = HexFormat.of().toHexDigits(new SecureRandom().nextInt());
        String kitNamespace = settings.memberPrefix() + "-" + runId;
        out.printf("orbitkv conformance: target %s (peer %s, http %s), cluster %s %s, %d scenarios%n", target,
                settings.targetPeer(), settings.targetHttp(), settings.cluster(), clusterUuid, rows.size());

        KitReport report = new KitReport(out);
        AdversarialSource listener;
        try {
            listener = AdversarialSource.start(settings.listen());
        } catch (java.io.IOException e) {
            throw new SetupException("cannot listen on " + settings.listen() + ": " + e.getMessage(), e);
        }
        Endpoint advertised = settings.advertise().orElse(listener.endpoint());
        out.printf("orbitkv conformance: kit listener %s, advertised as %s, member prefix %s, kit namespace %s%n",
                listener.endpoint(), advertised, settings.memberPrefix(), kitNamespace);
        try (KitMembers members = new KitMembers(settings.etcd(), settings.cluster(), settings.memberPrefix(), advertised, clusterUuid);
                SessionRouter router = new SessionRouter(listener, target, settings.answerBound())) {
            SourceScenarios sources = new SourceScenarios(settings, api, members, target, kitNamespace);
            RequesterScenarios requesters = requesterNamespace(status, kitNamespace)
                    .map(ns -> new RequesterScenarios(settings, api, members, router, target, ns)).orElse(null);
            boolean sourcesReady = false;
            try {
                for (ScenarioRow row : rows) {
                    long t0 = System.nanoTime();
                    Verdict v;
                    if (!row.policies().isEmpty() && settings.skipPolicy()) {
                        v = new Verdict.NotApplicable("not applicable: " + String.join(" ", row.policies()) + " row (this "
                                + "implementation's policy, not the protocol) skipped by --skip-policy");
                    } else if (row.side().equals("source")) {
                        if (!sourcesReady) {
                            setUpSources(sources);
                            sourcesReady = true;
                        }
                        v = verdict(row, () -> sources.run(row));
                    } else if (requesters == null) {
                        v = new Verdict.NotApplicable("not applicable: the target subscribes to no namespace (empty scope), so it "
                                + "opens no session to the kit source");
                    } else {
                        v = verdict(row, () -> requesters.run(row));
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

    interface Body {
        String run() throws Exception;
    }

    /** Runs one scenario and turns its outcome, skip or failure into the verdict. */
    private static Verdict verdict(ScenarioRow row, Body body) throws InterruptedException {
        try {
            String outcome = body.run();
            return outcome.equals(row.expected()) ? new Verdict.Passed(outcome)
                    : new Verdict.Failed("expected " + row.expected() + ", got " + outcome);
        } catch (ScenarioSkipped s) {
            return s.verdict();
        } catch (InterruptedException e) {
            throw e;
        } catch (AssertionError e) {
            return new Verdict.Failed(e.getMessage());
        } catch (Exception e) {
            return new Verdict.Failed(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }
}
