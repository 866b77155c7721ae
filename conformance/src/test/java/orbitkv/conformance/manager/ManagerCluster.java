package orbitkv.conformance.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.MembershipAdmin;
import orbitkv.testing.Await;

/**
 * Distributed Manager processes on one freshly formatted cluster of a real etcd (issue 34 item 6): the launch,
 * readiness, membership await and cleanup that the gates used to copy. Each Manager runs on
 * {@link ManagerProcess#distributedArgs} with its own directory under the cluster's work directory (DRAM arena in
 * {@code dir/dram}) and {@link ManagerProcess#LOAD_TOLERANT_LEASE} (docs/testing.md rule 4: the gates' subject is
 * not lease timing). Resources a gate puts between its Managers (fault proxies) can be handed to {@link #own} and
 * close with the cluster.
 */
public final class ManagerCluster implements AutoCloseable {
    /** The await bound of the fixture's own waits (readiness of membership, published fences). */
    public static final Duration BOUND = Duration.ofSeconds(30);

    private final EtcdFixture etcd;
    private final String name;
    private final Path work;
    private final List<ManagerProcess> all = new ArrayList<>();
    private final Map<ManagerProcess, Path> dirs = new HashMap<>();
    private final List<AutoCloseable> owned = new ArrayList<>();

    private final UUID uuid;

    private ManagerCluster(EtcdFixture etcd, String name, Path work, UUID uuid) {
        this.etcd = etcd;
        this.name = name;
        this.work = work;
        this.uuid = uuid;
    }

    /** A new cluster {@code prefix-<random>} formatted on {@code etcd}, with a new temporary work directory. */
    public static ManagerCluster format(EtcdFixture etcd, String prefix) throws IOException {
        return format(etcd, prefix, Files.createTempDirectory("orbitkv-" + prefix + "-"));
    }

    /**
     * As {@link #format(EtcdFixture, String)} with the work directory (and so every DRAM arena) in {@code /dev/shm}
     * where it is a writable directory, else in the temporary directory: for gates whose arenas are hundreds of MiB.
     */
    public static ManagerCluster formatInMemory(EtcdFixture etcd, String prefix) throws IOException {
        Path shm = Path.of("/dev/shm");
        return format(etcd, prefix, Files.isDirectory(shm) && Files.isWritable(shm)
                ? Files.createTempDirectory(shm, "orbitkv-" + prefix + "-") : Files.createTempDirectory("orbitkv-" + prefix + "-"));
    }

    private static ManagerCluster format(EtcdFixture etcd, String prefix, Path work) throws IOException {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        try (MembershipAdmin admin = MembershipAdmin.connect(etcd.endpoints(), name, EtcdFixture.ADMIN_CALL_TIMEOUT_MS)) {
            MembershipAdmin.FormatResult formatted = admin.format();
            assertThat(formatted).isInstanceOf(MembershipAdmin.Formatted.class);
            return new ManagerCluster(etcd, name, work, ((MembershipAdmin.Formatted) formatted).cluster().uuid());
        } catch (RuntimeException | AssertionError e) {
            ManagerProcess.deleteTree(work);
            throw e;
        }
    }

    public String name() {
        return name;
    }

    /** The cluster UUID the format wrote (every member's status and fence names it). */
    public UUID uuid() {
        return uuid;
    }

    public Path work() {
        return work;
    }

    /** Every Manager launched so far, in launch order (killed ones included). */
    public List<ManagerProcess> all() {
        return List.copyOf(all);
    }

    /** The directory of Manager {@code m} (its DRAM arena in {@code dram}; the gate's own files beside). */
    public Path dir(ManagerProcess m) {
        return dirs.get(m);
    }

    /** A Manager's own options, given its directory (where a gate creates its SSD directory, for example). */
    @FunctionalInterface
    public interface NodeOptions {
        List<String> apply(Path dir) throws IOException;
    }

    /**
     * Launches Manager {@code node} (not awaited) with JVM options {@code jvm}: {@code options(dir)} are its options
     * after the cluster's, where {@code dir} is its own new directory; its process is named
     * {@code node-<launch number>}.
     */
    public ManagerProcess launch(String node, List<String> jvm, NodeOptions options) throws IOException {
        return launch(node, options, jvm);
    }

    /** {@link #launch(String, List, NodeOptions)} with {@link ManagerProcess}'s default JVM options (its heap bound). */
    public ManagerProcess launch(String node, NodeOptions options) throws IOException {
        return launch(node, options, null);
    }

    private ManagerProcess launch(String node, NodeOptions options, List<String> jvm) throws IOException {
        return launch(node, etcd.endpoints().toString(), jvm, options);
    }

    /**
     * As {@link #launch(String, List, NodeOptions)}, reaching etcd at {@code etcdUrl} instead of the cluster's
     * endpoints (a fault proxy in front of etcd, to fence this one Manager); {@code jvm} null means
     * {@link ManagerProcess}'s default JVM options.
     */
    public ManagerProcess launch(String node, String etcdUrl, List<String> jvm, NodeOptions options) throws IOException {
        String launchName = node + "-" + all.size();
        Path dir = Files.createDirectories(work.resolve(launchName));
        List<String> args = ManagerProcess.distributedArgs(name, node, etcdUrl, Files.createDirectories(dir.resolve("dram")));
        args.addAll(options.apply(dir));
        args.addAll(ManagerProcess.LOAD_TOLERANT_LEASE);
        ManagerProcess m = jvm == null ? ManagerProcess.launch(launchName, work.resolve("logs"), args)
                : ManagerProcess.launch(launchName, work.resolve("logs"), jvm, args);
        all.add(m);
        dirs.put(m, dir);
        return m;
    }

    /** Awaits every launched Manager's ready line, then every one admitting all of them as members. */
    public void awaitMembers() {
        for (ManagerProcess m : all) {
            m.awaitReady();
        }
        int n = all.size();
        for (ManagerProcess m : all) {
            Await.until(m + " admits " + n + " members", BOUND, () -> api(m).status().at("/membership/members").asInt() == n);
        }
    }

    /** {@code resource} closes with the cluster, after its Managers. */
    public <T extends AutoCloseable> T own(T resource) {
        owned.add(resource);
        return resource;
    }

    public static ManagerApi api(ManagerProcess m) {
        return new ManagerApi(m.httpBase());
    }

    /**
     * {@code requester}'s index has everything {@code sources} published so far (sync, then await of each fence
     * with {@code awaitTimeoutMs}; API-5).
     */
    public static void published(ManagerProcess requester, long awaitTimeoutMs, ManagerProcess... sources) {
        for (ManagerProcess s : sources) {
            ManagerApi.Reply sync = api(s).sync();
            assertThat(sync.status()).as(sync.text()).isEqualTo(200);
            ManagerApi.Reply await = api(requester).await(sync.json().get("inventory_fence"),
                    api(requester).status().at("/scope/digest").asText(), awaitTimeoutMs);
            assertThat(await.status()).as(await.text()).isEqualTo(200);
        }
    }

    @Override
    public void close() throws IOException {
        all.forEach(ManagerProcess::close);
        for (AutoCloseable r : owned) {
            try {
                r.close();
            } catch (Exception e) {
                throw new IOException("closing " + r, e);
            }
        }
        ManagerProcess.deleteTree(work);
    }
}
