package orbitkv.conformance.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.testing.Await;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real etcd for the conformance gates (DESIGN §10): a JUnit 5 extension that starts etcd members, as one
 * member or as an n-member cluster, with client and metrics URLs on loopback, and can kill, stop (freeze),
 * continue and restart a member. Use it as
 * {@code @RegisterExtension static final EtcdFixture ETCD = EtcdFixture.singleNode();}; it starts before the
 * class's tests and always cleans up after them.
 *
 * <p>{@link EtcdRuntimeSelection} chooses the {@link EtcdRuntime}: local processes of the Debian binary
 * ({@link ProcessEtcdRuntime}: SIGKILL, SIGSTOP, SIGCONT by PID) or, when no binary exists and a Docker
 * engine answers, containers ({@link ContainerEtcdRuntime}: docker kill, pause, unpause). A missing etcd
 * fails the run, never skips it.
 */
public final class EtcdFixture implements BeforeAllCallback, AfterAllCallback {
    private static final Duration READY_BOUND = Duration.ofSeconds(30);
    /**
     * The etcd call deadline of a gate's own {@code MembershipAdmin} (format, show, cutover before the Managers
     * start). The admin call is setup, not the property under test: 2-5 s failed under load (a TLS handshake and a
     * fresh client on a busy machine, issue 25), so it is generous. Tests that check a deadline use their own.
     */
    public static final long ADMIN_CALL_TIMEOUT_MS = 30_000;
    private final int size;
    private final List<Member> members = new ArrayList<>();
    private EtcdRuntime runtime;

    private EtcdFixture(int size) {
        if (size < 1 || size > EtcdContainerSpec.SIZE_MAX) {
            throw new IllegalArgumentException("cluster size must be 1.." + EtcdContainerSpec.SIZE_MAX + ", got " + size);
        }
        this.size = size;
    }

    public static EtcdFixture singleNode() {
        return new EtcdFixture(1);
    }

    public static EtcdFixture cluster(int size) {
        return new EtcdFixture(size);
    }

    /** One etcd member, whichever runtime runs it. */
    public final class Member {
        final EtcdRuntime.MemberHandle handle;

        Member(EtcdRuntime.MemberHandle handle) {
            this.handle = handle;
        }

        public URI clientUrl() {
            return handle.clientUrl();
        }

        public URI metricsUrl() {
            return handle.metricsUrl();
        }

        /** Host PID of the member's etcd process (a new one after {@link #restart()}). */
        public long pid() {
            return handle.pid();
        }

        public boolean alive() {
            return handle.alive();
        }

        /** SIGKILL (process) or docker kill (container), then wait for the member to be gone. */
        public void kill() {
            handle.kill();
        }

        /**
         * Freezes the member: SIGSTOP (process) or docker pause (container) both freeze its processes; it
         * keeps its sockets but answers nothing.
         */
        public void stop() {
            handle.stop();
        }

        /** SIGCONT / docker unpause after {@link #stop()}. */
        public void cont() {
            handle.cont();
        }

        /** Starts the member again on the same ports with the same data and waits until it is healthy. */
        public void restart() {
            if (alive()) {
                throw new IllegalStateException("etcd " + handle.name() + " is running");
            }
            handle.relaunch();
            awaitHealthy(this);
        }

        /** True iff /metrics says this member leads. */
        public boolean isLeader() {
            return alive() && metricValue(scrape(this), "etcd_server_is_leader") == 1.0;
        }

        @Override
        public String toString() {
            return handle.name() + "@" + clientUrl();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    /** Starts the members with the selected runtime and waits (bounded) until every one reports healthy. */
    public void start() throws IOException {
        runtime = switch (EtcdRuntimeSelection.select()) {
            case EtcdRuntimeSelection.Selection.LocalBinary b -> new ProcessEtcdRuntime(b.etcd());
            case EtcdRuntimeSelection.Selection.Testcontainers t -> new ContainerEtcdRuntime(System.getenv());
            case EtcdRuntimeSelection.Selection.Missing m -> throw new AssertionError(m.message());
        };
        try {
            for (EtcdRuntime.MemberHandle h : runtime.launch(size)) {
                members.add(new Member(h));
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
        for (Member m : members) {
            awaitHealthy(m);
        }
    }

    private void awaitHealthy(Member m) {
        try {
            Await.until("etcd " + m + " healthy (log: " + m.handle.logLocation() + ")", READY_BOUND, () -> {
                String death = m.handle.deathReport();
                if (death != null) {
                    throw new AssertionError("etcd " + m.handle.name() + " " + death);
                }
                return http(URI.create(m.clientUrl() + "/health")).contains("\"health\":\"true\"");
            });
        } catch (AssertionError e) {
            close();
            throw e;
        }
    }

    /** {@code n} distinct free loopback ports (for tests that start an etcd of their own, e.g. over TLS). */
    public static int[] freeLoopbackPorts(int n) throws IOException {
        return EtcdRuntime.freeLoopbackPorts(n);
    }

        /** All members, in index order. */
    public List<Member> members() {
        return List.copyOf(members);
    }

    public Member member(int index) {
        return members.get(index);
    }

    /** The current leader among live members (bounded wait for an election). */
    public Member leader() {
        Member[] found = new Member[1];
        Await.until("an etcd leader", Duration.ofSeconds(15), () -> {
            for (Member m : members) {
                if (m.isLeader()) {
                    found[0] = m;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    /** The client URLs of all members, as {@code --etcd} takes them. */
    public EtcdEndpoints endpoints() {
        return new EtcdEndpoints(members.stream().map(Member::clientUrl).toList());
    }

    /** {@code etcdctl put key value} against the live members. */
    public void put(String key, String value) {
        etcdctl("put", key, "--", value);
    }

    /** {@code etcdctl get --print-value-only key}: the value, or null when absent. */
    public String get(String key) {
        String out = etcdctl("get", "--print-value-only", key);
        return out.isEmpty() ? null : out.endsWith("\n") ? out.substring(0, out.length() - 1) : out;
    }

    /** Keys under a prefix, sorted. */
    public List<String> keys(String prefix) {
        String out = etcdctl("get", "--prefix", "--keys-only", prefix);
        return out.lines().filter(l -> !l.isBlank()).sorted().toList();
    }

    /** The store's current revision. */
    public long revision() {
        String json = etcdctl("get", "/", "-w", "json");
        Matcher m = Pattern.compile("\"revision\":(\\d+)").matcher(json);
        if (!m.find()) {
            throw new AssertionError("no revision in etcdctl output: " + json);
        }
        return Long.parseLong(m.group(1));
    }

    /** Compacts the history up to the current revision (a watch behind it gets a compaction error). */
    public long compactToCurrent() {
        long rev = revision();
        etcdctl("compact", Long.toString(rev));
        return rev;
    }

    /** Runs etcdctl with the live members' endpoints; fails the test on a non-zero exit. */
    public String etcdctl(String... args) {
        List<EtcdRuntime.MemberHandle> live = members.stream().filter(Member::alive).map(m -> m.handle).toList();
        List<String> all = new ArrayList<>(List.of("--command-timeout=5s"));
        all.addAll(List.of(args));
        return runtime.etcdctl(live, all);
    }

    /** The Prometheus text of a member's /metrics endpoint. */
    public String scrape(Member m) {
        return http(m.metricsUrl());
    }

    /** Sum of every sample of {@code metric} (any labels) in a Prometheus text. */
    public static double metricValue(String text, String metric) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(metric + " ") || line.startsWith(metric + "{")) {
                String[] parts = line.trim().split("\\s+");
                sum += Double.parseDouble(parts[parts.length - 1]);
            }
        }
        return sum;
    }

    /** Removes every member (a stopped one included) and whatever the runtime created. */
    public void close() {
        members.clear();
        if (runtime != null) {
            EtcdRuntime r = runtime;
            runtime = null;
            r.close();
        }
    }

    private static String http(URI uri) {
        try {
            HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            try (InputStream in = c.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } finally {
                c.disconnect();
            }
        } catch (IOException e) {
            return "";
        }
    }
}
