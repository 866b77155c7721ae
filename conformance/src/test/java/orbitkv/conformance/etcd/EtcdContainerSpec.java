package orbitkv.conformance.etcd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * What the Testcontainers runtime ({@link ContainerEtcdRuntime}) creates, as plain data, so that it is
 * unit-tested without Docker: one container per etcd member plus one etcdctl client container, all on one
 * user-defined Docker network where each container's network alias is its member name.
 *
 * @param image         the etcd image ({@link #DEFAULT_IMAGE} unless {@code ORBITKV_ETCD_IMAGE} overrides it)
 * @param alias         the container's network alias: the member name ({@code m0}, {@code m1}, ...) or
 *                      {@link #CLIENT_ALIAS}
 * @param command       the container command (argv; the image has no shell from etcd 3.5 on, so no wrapper)
 * @param loopbackPorts container port to host port, each bound on {@code 127.0.0.1} only; the exposed ports
 *                      are exactly its keys. Fixed host ports (not Docker's random ones) so a member keeps its
 *                      client URL across a container restart.
 */
record EtcdContainerSpec(String image, String alias, List<String> command, SortedMap<Integer, Integer> loopbackPorts) {
    /** The etcd 3.4 image the container runtime uses by default: the same release as Debian's etcd-server. */
    static final String DEFAULT_IMAGE = "quay.io/coreos/etcd:v3.4.23";
    /** Environment variable that replaces {@link #DEFAULT_IMAGE} (any etcd 3.4+ image with /usr/local/bin/etcd). */
    static final String IMAGE_ENV = "ORBITKV_ETCD_IMAGE";
    /** Where the image keeps its binaries (3.4 and 3.5 images alike). */
    static final String ETCD = "/usr/local/bin/etcd";
    static final String ETCDCTL = "/usr/local/bin/etcdctl";
    static final int CLIENT_PORT = 2379;
    static final int PEER_PORT = 2380;
    static final int METRICS_PORT = 2381;
    /** Data directory inside a member container (its writable layer: kept across a container restart). */
    static final String DATA_DIR = "/var/lib/orbitkv-etcd";
    /** Network alias of the etcdctl client container. */
    static final String CLIENT_ALIAS = "etcdctl";
    /** Cluster sizes the fixture accepts. */
    static final int SIZE_MAX = 7;

    EtcdContainerSpec {
        Objects.requireNonNull(image, "image");
        Objects.requireNonNull(alias, "alias");
        if (image.isBlank()) {
            throw new IllegalArgumentException("image must not be blank");
        }
        if (alias.isBlank()) {
            throw new IllegalArgumentException("alias must not be blank");
        }
        command = List.copyOf(command);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command must not be empty (alias " + alias + ")");
        }
        loopbackPorts = new TreeMap<>(loopbackPorts);
        loopbackPorts.forEach((container, host) -> {
            if (container < 1 || container > 65535 || host < 1 || host > 65535) {
                throw new IllegalArgumentException("loopbackPorts must map 1..65535 to 1..65535, got "
                        + container + " -> " + host + " (alias " + alias + ")");
            }
        });
    }

    /** The container ports to expose, ascending. */
    List<Integer> exposedPorts() {
        return List.copyOf(loopbackPorts.keySet());
    }

    /** The image for this environment: {@code ORBITKV_ETCD_IMAGE} when set and not blank, else the default. */
    static String image(Map<String, String> env) {
        String override = env.getOrDefault(IMAGE_ENV, "").strip();
        return override.isEmpty() ? DEFAULT_IMAGE : override;
    }

    /** Member name of index {@code i}: also its network alias and its name in {@code --initial-cluster}. */
    static String memberName(int i) {
        return "m" + i;
    }

    /** {@code m0=http://m0:2380,m1=http://m1:2380,...}: peers reach each other by network alias. */
    static String initialCluster(int size) {
        checkSize(size);
        return IntStream.range(0, size).mapToObj(EtcdContainerSpec::memberName)
                .map(n -> n + "=http://" + n + ":" + PEER_PORT).collect(Collectors.joining(","));
    }

    /**
     * The member containers of a new cluster of {@code hostPorts.length / 2} members: member i binds its
     * client port to {@code hostPorts[2i]} and its metrics port to {@code hostPorts[2i+1]} on loopback.
     */
    static List<EtcdContainerSpec> members(String image, String token, int[] hostPorts) {
        if (hostPorts.length % 2 != 0) {
            throw new IllegalArgumentException("hostPorts must hold 2 ports per member, got " + hostPorts.length);
        }
        int size = hostPorts.length / 2;
        String initialCluster = initialCluster(size);
        List<EtcdContainerSpec> specs = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            String name = memberName(i);
            SortedMap<Integer, Integer> ports = new TreeMap<>(Map.of(
                    CLIENT_PORT, hostPorts[2 * i], METRICS_PORT, hostPorts[2 * i + 1]));
            specs.add(new EtcdContainerSpec(image, name, List.of(ETCD,
                    "--name", name,
                    "--data-dir", DATA_DIR,
                    "--listen-client-urls", "http://0.0.0.0:" + CLIENT_PORT,
                    "--advertise-client-urls", "http://" + name + ":" + CLIENT_PORT,
                    "--listen-peer-urls", "http://0.0.0.0:" + PEER_PORT,
                    "--initial-advertise-peer-urls", "http://" + name + ":" + PEER_PORT,
                    "--listen-metrics-urls", "http://0.0.0.0:" + METRICS_PORT,
                    "--initial-cluster", initialCluster,
                    "--initial-cluster-state", "new",
                    "--initial-cluster-token", token), ports));
        }
        return List.copyOf(specs);
    }

    /**
     * The etcdctl client container: it runs etcdctl against the members' in-network URLs (with
     * {@code docker exec}), so no local etcdctl is needed. From etcd 3.5 on the image has no shell and no
     * sleep, so it stays up by running a private, unclustered etcd on its own loopback, which nobody uses.
     */
    static EtcdContainerSpec etcdctlClient(String image) {
        return new EtcdContainerSpec(image, CLIENT_ALIAS, List.of(ETCD,
                "--name", CLIENT_ALIAS,
                "--data-dir", "/tmp/" + CLIENT_ALIAS,
                "--listen-client-urls", "http://127.0.0.1:12379",
                "--advertise-client-urls", "http://127.0.0.1:12379",
                "--listen-peer-urls", "http://127.0.0.1:12380",
                "--initial-advertise-peer-urls", "http://127.0.0.1:12380",
                "--initial-cluster", CLIENT_ALIAS + "=http://127.0.0.1:12380"), new TreeMap<>());
    }

    /** The in-network client URLs of the named members, as etcdctl's {@code --endpoints} takes them. */
    static String inNetworkEndpoints(List<String> memberNames) {
        return memberNames.stream().map(n -> "http://" + n + ":" + CLIENT_PORT).collect(Collectors.joining(","));
    }

    private static void checkSize(int size) {
        if (size < 1 || size > SIZE_MAX) {
            throw new IllegalArgumentException("cluster size must be 1.." + SIZE_MAX + ", got " + size);
        }
    }
}
