package orbitkv.conformance.etcd;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import orbitkv.testing.Await;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;
import org.testcontainers.utility.DockerImageName;

/**
 * The Testcontainers runtime, chosen when no local etcd binary exists but a Docker engine answers: each
 * member is a {@link GenericContainer} of an etcd 3.4 image ({@link EtcdContainerSpec#DEFAULT_IMAGE},
 * overridable by {@code ORBITKV_ETCD_IMAGE}) on one user-defined Docker network, where the container's
 * network alias is the member name and {@code --initial-cluster} names peers by alias. Each member's client
 * and metrics ports are bound to fixed free ports on {@code 127.0.0.1}, so the fixture sees the same
 * loopback URLs as with local processes. Everything created is described by {@link EtcdContainerSpec},
 * which is unit-tested without Docker.
 *
 * <ul>
 *   <li>kill: {@code docker kill} (SIGKILL to the container's etcd), then a bounded wait until it is not
 *       running;</li>
 *   <li>stop / cont: {@code docker pause} / {@code docker unpause}. SIGSTOP (the process runtime) and
 *       docker pause (the cgroup freezer) both freeze the member's processes: sockets stay open, nothing
 *       answers, the member stays "alive";</li>
 *   <li>restart keeps the data: {@code docker start} of the same killed container, whose writable layer
 *       holds the data directory {@link EtcdContainerSpec#DATA_DIR}, on the same network alias and the
 *       same host ports;</li>
 *   <li>etcdctl: {@code docker exec} of the image's etcdctl in a client container on the same network,
 *       against the live members' in-network URLs (no local etcdctl needed).</li>
 * </ul>
 *
 * <p>Not run on the development machine, where no Docker engine answers (docs/operations.md §7).
 */
final class ContainerEtcdRuntime implements EtcdRuntime {
    /** Bound on creating and starting one container (an image pull included). */
    static final Duration CONTAINER_START_BOUND = Duration.ofMinutes(3);
    /** Bound on a {@code docker exec} of etcdctl (etcdctl itself gets {@code --command-timeout}). */
    static final Duration ETCDCTL_BOUND = Duration.ofSeconds(15);
    private static final Duration KILL_BOUND = Duration.ofSeconds(10);

    private final String image;
    private final List<Member> members = new ArrayList<>();
    private Network network;
    private GenericContainer<?> client;

    ContainerEtcdRuntime(Map<String, String> env) {
        this.image = EtcdContainerSpec.image(env);
    }

    /** One member container. */
    final class Member implements MemberHandle {
        final EtcdContainerSpec spec;
        final GenericContainer<?> container;

        Member(EtcdContainerSpec spec, GenericContainer<?> container) {
            this.spec = spec;
            this.container = container;
        }

        @Override
        public String name() {
            return spec.alias();
        }

        @Override
        public URI clientUrl() {
            return URI.create("http://127.0.0.1:" + spec.loopbackPorts().get(EtcdContainerSpec.CLIENT_PORT));
        }

        @Override
        public URI metricsUrl() {
            return URI.create("http://127.0.0.1:" + spec.loopbackPorts().get(EtcdContainerSpec.METRICS_PORT) + "/metrics");
        }

        @Override
        public long pid() {
            Long pid = state().getPidLong();
            if (pid == null || pid == 0) {
                throw new IllegalStateException("etcd " + name() + " has no running process");
            }
            return pid;
        }

        @Override
        public boolean alive() {
            if (container.getContainerId() == null) {
                return false;
            }
            return Boolean.TRUE.equals(state().getRunning());
        }

        @Override
        public void kill() {
            docker().killContainerCmd(container.getContainerId()).withSignal("SIGKILL").exec();
            Await.until("etcd container " + name() + " gone after docker kill", KILL_BOUND, () -> !alive());
        }

        @Override
        public void stop() {
            docker().pauseContainerCmd(container.getContainerId()).exec();
        }

        @Override
        public void cont() {
            docker().unpauseContainerCmd(container.getContainerId()).exec();
        }

        /** {@code docker start} of the same container: same data directory, alias and host ports. */
        @Override
        public void relaunch() {
            docker().startContainerCmd(container.getContainerId()).exec();
        }

        @Override
        public String deathReport() {
            InspectContainerResponse.ContainerState s = state();
            if (Boolean.TRUE.equals(s.getRunning())) {
                return null;
            }
            return "container exited with " + s.getExitCodeLong() + "; log: " + tail(container.getLogs());
        }

        @Override
        public String logLocation() {
            return "docker logs " + container.getContainerId();
        }

        boolean paused() {
            return Boolean.TRUE.equals(state().getPaused());
        }

        private InspectContainerResponse.ContainerState state() {
            return docker().inspectContainerCmd(container.getContainerId()).exec().getState();
        }

        private DockerClient docker() {
            return container.getDockerClient();
        }
    }

    @Override
    public List<MemberHandle> launch(int size) throws IOException {
        int[] ports = EtcdRuntime.freeLoopbackPorts(2 * size);
        network = Network.newNetwork();
        String token = "orbitkv-" + UUID.randomUUID();
        for (EtcdContainerSpec spec : EtcdContainerSpec.members(image, token, ports)) {
            GenericContainer<?> c = container(spec, network);
            members.add(new Member(spec, c));
            c.start(); // returns once running; the fixture awaits /health (a member waits for its quorum)
        }
        client = container(EtcdContainerSpec.etcdctlClient(image), network).withEnv("ETCDCTL_API", "3");
        client.start();
        return List.copyOf(members);
    }

    /**
     * A container exactly as {@code spec} describes it, not yet created (no Docker call happens here);
     * started by {@link #launch}, readiness awaited by the fixture.
     */
    static GenericContainer<?> container(EtcdContainerSpec spec, Network network) {
        List<PortBinding> bindings = spec.loopbackPorts().entrySet().stream()
                .map(e -> new PortBinding(Ports.Binding.bindIpAndPort("127.0.0.1", e.getValue()), ExposedPort.tcp(e.getKey())))
                .toList();
        return new GenericContainer<>(DockerImageName.parse(spec.image()))
                .withNetwork(network)
                .withNetworkAliases(spec.alias())
                .withCommand(spec.command().toArray(String[]::new))
                .withExposedPorts(spec.exposedPorts().toArray(Integer[]::new))
                .withStartupTimeout(CONTAINER_START_BOUND)
                .waitingFor(new RunningIsEnough())
                // exactly the spec's loopback bindings: no random publication of the image's EXPOSEd ports
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig()
                        .withPublishAllPorts(false)
                        .withPortBindings(new Ports(bindings.toArray(PortBinding[]::new))));
    }

    /**
     * Testcontainers' default wait (a listening port) would block a member's start until its quorum
     * exists, which needs the next member started: readiness is the fixture's bounded /health await.
     */
    private static final class RunningIsEnough extends AbstractWaitStrategy {
        @Override
        protected void waitUntilReady() {
            // the container is running: that is all start() waits for
        }
    }

    @Override
    public String etcdctl(List<MemberHandle> live, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(EtcdContainerSpec.ETCDCTL,
                "--endpoints=" + EtcdContainerSpec.inNetworkEndpoints(live.stream().map(MemberHandle::name).toList())));
        cmd.addAll(args);
        ExecutorService exec = Executors.newSingleThreadExecutor();
        try {
            Future<ExecResult> run = exec.submit(() -> client.execInContainer(cmd.toArray(String[]::new)));
            ExecResult r = run.get(ETCDCTL_BOUND.toMillis(), TimeUnit.MILLISECONDS);
            if (r.getExitCode() != 0) {
                throw new AssertionError("etcdctl " + String.join(" ", args) + " failed: " + r.getStdout() + r.getStderr());
            }
            return r.getStdout();
        } catch (TimeoutException e) {
            throw new AssertionError("etcdctl " + String.join(" ", args) + " did not end within " + ETCDCTL_BOUND.toSeconds() + " s");
        } catch (ExecutionException e) {
            throw new AssertionError("etcdctl " + String.join(" ", args) + " could not run: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        } finally {
            exec.shutdownNow();
        }
    }

    /** Unpauses a stopped member (a paused container cannot be removed), then removes every container and the network. */
    @Override
    public void close() {
        List<RuntimeException> failures = new ArrayList<>();
        for (Member m : members) {
            try {
                if (m.alive() && m.paused()) {
                    m.cont();
                }
                m.container.stop();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        members.clear();
        try {
            if (client != null) {
                client.stop();
            }
            if (network != null) {
                network.close();
            }
        } catch (RuntimeException e) {
            failures.add(e);
        }
        client = null;
        network = null;
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("etcd containers could not all be removed");
            failures.forEach(e::addSuppressed);
            throw e;
        }
    }

    private static String tail(String log) {
        List<String> lines = log.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }
}
