package orbitkv.conformance.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ports;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;

/**
 * The containers the Testcontainers runtime creates, checked as data (no Docker engine answers on the
 * development machine, so {@link ContainerEtcdRuntime} itself is not run here).
 */
@Tag("unit")
class EtcdContainerSpecTest {
    private static final int[] PORTS = {41001, 41002, 41003, 41004, 41005, 41006};

    /** The value following {@code flag} in a command line. */
    private static String flag(List<String> command, String flag) {
        int i = command.indexOf(flag);
        assertThat(i).as("flag %s in %s", flag, command).isNotNegative();
        return command.get(i + 1);
    }

    @Test
    @DisplayName("image: quay.io/coreos/etcd:v3.4.23 unless ORBITKV_ETCD_IMAGE names another (blank means unset)")
    void imageOverride() {
        assertThat(EtcdContainerSpec.image(Map.of())).isEqualTo("quay.io/coreos/etcd:v3.4.23");
        assertThat(EtcdContainerSpec.image(Map.of("ORBITKV_ETCD_IMAGE", "  "))).isEqualTo(EtcdContainerSpec.DEFAULT_IMAGE);
        assertThat(EtcdContainerSpec.image(Map.of("ORBITKV_ETCD_IMAGE", "registry.local/etcd:v3.4.30")))
                .isEqualTo("registry.local/etcd:v3.4.30");
        assertThat(EtcdContainerSpec.members("registry.local/etcd:v3.4.30", "t", PORTS))
                .extracting(EtcdContainerSpec::image).containsOnly("registry.local/etcd:v3.4.30");
    }

    @Test
    @DisplayName("3 members: aliases m0..m2, --initial-cluster by alias on the peer port, one token, state new")
    void clusterOfThree() {
        List<EtcdContainerSpec> specs = EtcdContainerSpec.members(EtcdContainerSpec.DEFAULT_IMAGE, "tok-1", PORTS);
        assertThat(specs).extracting(EtcdContainerSpec::alias).containsExactly("m0", "m1", "m2");
        String expected = "m0=http://m0:2380,m1=http://m1:2380,m2=http://m2:2380";
        assertThat(EtcdContainerSpec.initialCluster(3)).isEqualTo(expected);
        for (EtcdContainerSpec s : specs) {
            List<String> c = s.command();
            assertThat(c.getFirst()).isEqualTo("/usr/local/bin/etcd");
            assertThat(flag(c, "--name")).isEqualTo(s.alias());
            assertThat(flag(c, "--initial-cluster")).isEqualTo(expected);
            assertThat(flag(c, "--initial-cluster-state")).isEqualTo("new");
            assertThat(flag(c, "--initial-cluster-token")).isEqualTo("tok-1");
            assertThat(flag(c, "--data-dir")).isEqualTo("/var/lib/orbitkv-etcd");
            assertThat(flag(c, "--listen-client-urls")).isEqualTo("http://0.0.0.0:2379");
            assertThat(flag(c, "--advertise-client-urls")).isEqualTo("http://" + s.alias() + ":2379");
            assertThat(flag(c, "--listen-peer-urls")).isEqualTo("http://0.0.0.0:2380");
            assertThat(flag(c, "--initial-advertise-peer-urls")).isEqualTo("http://" + s.alias() + ":2380");
            assertThat(flag(c, "--listen-metrics-urls")).isEqualTo("http://0.0.0.0:2381");
        }
    }

    @Test
    @DisplayName("client and metrics ports are exposed and bound to the given loopback ports; the peer port is network-only")
    void portsExposedAndMapped() {
        List<EtcdContainerSpec> specs = EtcdContainerSpec.members(EtcdContainerSpec.DEFAULT_IMAGE, "t", PORTS);
        assertThat(specs).allSatisfy(s -> assertThat(s.exposedPorts()).containsExactly(2379, 2381));
        assertThat(specs.get(0).loopbackPorts()).containsExactly(Map.entry(2379, 41001), Map.entry(2381, 41002));
        assertThat(specs.get(2).loopbackPorts()).containsExactly(Map.entry(2379, 41005), Map.entry(2381, 41006));
    }

    @Test
    @DisplayName("one member: --initial-cluster names only itself")
    void singleMember() {
        List<EtcdContainerSpec> specs = EtcdContainerSpec.members(EtcdContainerSpec.DEFAULT_IMAGE, "t", new int[] {41001, 41002});
        assertThat(specs).hasSize(1);
        assertThat(flag(specs.getFirst().command(), "--initial-cluster")).isEqualTo("m0=http://m0:2380");
    }

    @Test
    @DisplayName("the etcdctl client container exposes nothing and reaches members by alias")
    void etcdctlClient() {
        EtcdContainerSpec client = EtcdContainerSpec.etcdctlClient("img:1");
        assertThat(client.alias()).isEqualTo("etcdctl");
        assertThat(client.image()).isEqualTo("img:1");
        assertThat(client.exposedPorts()).isEmpty();
        assertThat(flag(client.command(), "--listen-client-urls")).startsWith("http://127.0.0.1:");
        assertThat(EtcdContainerSpec.inNetworkEndpoints(List.of("m0", "m2"))).isEqualTo("http://m0:2379,http://m2:2379");
    }

    @Test
    @DisplayName("bad sizes and ports are refused naming the field and bound")
    void refusals() {
        assertThatThrownBy(() -> EtcdContainerSpec.members("img", "t", new int[] {1, 2, 3}))
                .hasMessageContaining("hostPorts must hold 2 ports per member");
        assertThatThrownBy(() -> EtcdContainerSpec.members("img", "t", new int[0]))
                .hasMessageContaining("cluster size must be 1..7, got 0");
        assertThatThrownBy(() -> EtcdContainerSpec.members("img", "t", new int[16]))
                .hasMessageContaining("cluster size must be 1..7, got 8");
        assertThatThrownBy(() -> new EtcdContainerSpec("img", "m0", List.of("etcd"), new TreeMap<>(Map.of(2379, 0))))
                .hasMessageContaining("loopbackPorts must map 1..65535 to 1..65535, got 2379 -> 0");
        assertThatThrownBy(() -> new EtcdContainerSpec(" ", "m0", List.of("etcd"), new TreeMap<>()))
                .hasMessageContaining("image must not be blank");
        assertThatThrownBy(() -> new EtcdContainerSpec("img", "m0", List.of(), new TreeMap<>()))
                .hasMessageContaining("command must not be empty");
    }

    @Test
    @DisplayName("the runtime's GenericContainer carries the spec: image, alias, command, exposed ports, loopback bindings")
    void containerFromSpec() {
        EtcdContainerSpec spec = EtcdContainerSpec.members("quay.io/coreos/etcd:v3.4.23", "t", PORTS).get(1);
        try (Network network = Network.newNetwork();
                GenericContainer<?> c = ContainerEtcdRuntime.container(spec, network)) {
            // getDockerImageName() would resolve (pull) the image; the lazy image names it without Docker
            assertThat(c.getImage().toString()).contains("imageName=quay.io/coreos/etcd:v3.4.23");
            assertThat(c.getNetworkAliases()).contains("m1");
            assertThat(c.getNetwork()).isSameAs(network);
            assertThat(c.getCommandParts()).containsExactlyElementsOf(spec.command());
            assertThat(c.getExposedPorts()).containsExactly(2379, 2381);
            HostConfig hostConfig = hostConfigOf(c);
            assertThat(hostConfig.getPublishAllPorts()).isFalse();
            assertThat(hostConfig.getPortBindings().getBindings())
                    .containsEntry(ExposedPort.tcp(2379), new Ports.Binding[] {Ports.Binding.bindIpAndPort("127.0.0.1", 41003)})
                    .containsEntry(ExposedPort.tcp(2381), new Ports.Binding[] {Ports.Binding.bindIpAndPort("127.0.0.1", 41004)})
                    .hasSize(2);
        }
    }

    @Test
    @DisplayName("the etcdctl client's GenericContainer publishes no port at all")
    void clientContainerPublishesNothing() {
        try (Network network = Network.newNetwork();
                GenericContainer<?> c = ContainerEtcdRuntime.container(EtcdContainerSpec.etcdctlClient("img:1"), network)) {
            assertThat(c.getNetworkAliases()).contains("etcdctl");
            assertThat(c.getExposedPorts()).isEmpty();
            HostConfig hostConfig = hostConfigOf(c);
            assertThat(hostConfig.getPublishAllPorts()).isFalse();
            assertThat(hostConfig.getPortBindings().getBindings()).isEmpty();
        }
    }

    /** The host config after the container's create-command modifiers ran (no Docker call). */
    private static HostConfig hostConfigOf(GenericContainer<?> c) {
        HostConfig hostConfig = new HostConfig();
        CreateContainerCmd cmd = (CreateContainerCmd) Proxy.newProxyInstance(EtcdContainerSpecTest.class.getClassLoader(),
                new Class<?>[] {CreateContainerCmd.class},
                (proxy, method, args) -> method.getName().equals("getHostConfig") ? hostConfig : null);
        c.getCreateContainerCmdModifiers().forEach(m -> m.modify(cmd));
        return hostConfig;
    }
}
