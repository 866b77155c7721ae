package orbitkv.conformance.campaign;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import orbitkv.membership.CrashPoints;
import orbitkv.testing.Await;

/**
 * One seeded schedule's faults as its scenario applies them (issue 17 item 2): the operations a
 * {@link Scenario} needs (kill -9 and restart with or without crash points, SIGSTOP/SIGCONT, link faults,
 * etcd member loss, lease revocation), each counted by kind and reflected in the {@link SourceModel}s.
 */
final class Schedule {
    final long seed;
    final Scenario scenario;
    final SplittableRandom random;
    final CampaignCluster cluster;
    final Map<String, SourceModel> models;
    final Workload workload;
    final Violations violations;
    final Map<String, Long> faults = new TreeMap<>();
    final StringBuilder notes = new StringBuilder();
    /** A scale for every fault window: 1 for the long campaign, smaller for the short one. */
    final double pace;

    Schedule(long seed, Scenario scenario, CampaignCluster cluster, Map<String, SourceModel> models, Workload workload,
             Violations violations, double pace) {
        this.seed = seed;
        this.scenario = scenario;
        this.random = new SplittableRandom(seed);
        this.cluster = cluster;
        this.models = models;
        this.workload = workload;
        this.violations = violations;
        this.pace = pace;
    }

    void count(String kind) {
        faults.merge(kind, 1L, Long::sum);
    }

    void note(String s) {
        if (notes.length() < 400) {
            notes.append(notes.isEmpty() ? "" : "; ").append(s);
        }
    }

    /** A random node. */
    CampaignCluster.Node anyNode() {
        List<CampaignCluster.Node> all = List.copyOf(cluster.nodes.values());
        return all.get(random.nextInt(all.size()));
    }

    /** A random node other than {@code not}. */
    CampaignCluster.Node otherThan(CampaignCluster.Node not) {
        List<CampaignCluster.Node> all = cluster.nodes.values().stream().filter(n -> n != not).toList();
        return all.get(random.nextInt(all.size()));
    }

    /** Lets the load run for {@code ms} (scaled by {@link #pace}): the length of a fault window, not synchronization. */
    void hold(long ms) {
        LockSupport.parkNanos(Duration.ofMillis(Math.max(50, (long) (ms * pace))).toNanos());
    }

    /** A random duration in [min, max] ms. */
    long between(long min, long max) {
        return min + random.nextLong(max - min + 1);
    }

    /** Kills the node's process with SIGKILL (if it runs) and starts a new one, crash points armed if given. */
    void restart(CampaignCluster.Node n, String crashpoints) throws IOException, InterruptedException {
        String last = n.live() && !n.stopped ? n.refreshIncarnation() : null;
        if (n.process != null && n.process.alive()) {
            if (n.stopped) {
                n.process.signal("CONT");
            }
            n.process.kill9();
            count("kill9");
        }
        SourceModel model = models.get(n.name);
        model.restarted(last).forEach(s -> violations.add(s.property(), s.message()));
        n.start(crashpoints);
        model.started(n.incarnation);
    }

    void kill9(CampaignCluster.Node n) throws InterruptedException {
        if (n.live()) {
            n.process.kill9();
            count("kill9");
        }
    }

    /**
     * Waits (bounded) for a crash point to halt {@code n}; counts it by name, or notes that the schedule did not
     * reach it (then the process is killed like any other).
     */
    void awaitCrash(CampaignCluster.Node n, String point, Duration bound) throws InterruptedException {
        try {
            Await.until(n.name + " halts at crash point " + point, bound, () -> !n.process.alive());
        } catch (AssertionError notReached) {
            note(n.name + " did not reach " + point + " within " + bound.toSeconds() + " s");
            n.process.kill9();
            count("kill9");
            return;
        }
        Integer code = n.process.exitCode();
        if (code != null && code == CrashPoints.EXIT_STATUS) {
            count("crashpoint:" + point);
        } else {
            violations.add(Property.CONVERGENCE, n.name + " died (exit " + code + ") while armed at " + point
                    + ", not at the crash point: " + n.process.stderrText());
        }
    }

    /** SIGSTOP for {@code ms}, then SIGCONT: beyond the lease the process fences itself when it resumes, then heals. */
    void pause(CampaignCluster.Node n, long ms) throws IOException, InterruptedException {
        if (!n.live()) {
            return;
        }
        n.process.signal("STOP");
        n.stopped = true;
        count("sigstop");
        models.get(n.name).healed();
        LockSupport.parkNanos(Duration.ofMillis(ms).toNanos()); // the pause itself is the fault
        n.process.signal("CONT");
        n.stopped = false;
    }

    /** The journal head of a node (0 if it does not answer). */
    long head(CampaignCluster.Node n) {
        try {
            JsonNode st = n.api.status();
            return st.at("/inventory/head_sequence").asLong();
        } catch (RuntimeException | AssertionError e) {
            return 0;
        }
    }
}
