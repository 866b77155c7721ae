package orbitkv.conformance.perf;

import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.util.MutableHandlerRegistry;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySessionServer;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.MutationResult;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.SessionConfig;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Endpoint;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipConfig;
import orbitkv.membership.NodeId;
import orbitkv.membership.Registrant;
import orbitkv.membership.RegistrationResult;

/**
 * The isolation contract's test-owned metadata-only inventory peer, in its own JVM (so that its CPU never runs inside
 * the harness that times the foreground requests): an {@link InventorySource} with {@code residences} residences in one
 * namespace, served by an {@link InventorySessionServer} on its own loopback gRPC server and registered with real etcd
 * membership. Pressure records have no payload anywhere: they are inventory mutations only.
 *
 * <p>Control on standard input, one word a line: {@code start} begins the source loop (a burst of {@code burst}
 * mutations of hot residences every {@code cadence-ms}, scheduled on absolute times; a late loop fires once and never
 * starts a burst within half a period of the previous burst's publication, so it does not catch up), {@code stop} ends it and writes the tick
 * log ({@code scheduled_ns,wake_ns,first_publication_ns,last_publication_ns,terminal_sequence}) and the final resident
 * state ({@code key_hex,medium,sequence}) then prints {@code pressure-peer stopped head=H}; {@code exit} deregisters
 * and exits. The idle arm starts the same peer and never sends {@code start}.
 *
 * <p>Arguments: {@code --etcd URLS --cluster NAME --node ID --namespace NS --residences N --burst B --cadence-ms MS
 * --ticks-max T --out DIR}.
 */
public final class PressurePeer {
    private PressurePeer() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        Namespace ns = Namespace.utf8(a.get("namespace"));
        int residences = Integer.parseInt(a.get("residences"));
        int burst = Integer.parseInt(a.get("burst"));
        long period = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(a.get("cadence-ms")));
        int ticksMax = Integer.parseInt(a.get("ticks-max"));
        Path out = Path.of(a.get("out"));

        InventorySource source = InventorySource.create(InventoryConfig.defaults());
        List<StateKey> keys = new ArrayList<>(residences);
        long[] state = new long[residences]; // the residency sequence of each key's DRAM residence, -1 = not resident
        for (int i = 0; i < residences; i++) {
            byte[] k = new byte[32];
            for (int b = 0; b < 8; b++) {
                k[b] = (byte) (i >>> (56 - 8 * b));
            }
            k[31] = 0x5a;
            StateKey key = new StateKey(ns, k);
            keys.add(key);
            state[i] = ((MutationResult.Recorded) source.put(key, Medium.DRAM, 4096)).sequence();
        }
        MutableHandlerRegistry registry = new MutableHandlerRegistry();
        Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).fallbackHandlerRegistry(registry).build().start();
        RegistrationResult r = Membership.register(EtcdEndpoints.parse(a.get("etcd")), new Registrant(a.get("cluster"),
                new NodeId(a.get("node")), new Endpoint("127.0.0.1", server.getPort()), new Endpoint("127.0.0.1", 1)), MembershipConfig.defaults());
        if (!(r instanceof RegistrationResult.Registered reg)) {
            System.out.println("pressure-peer failed registration: " + r);
            System.exit(2);
            return;
        }
        Membership m = reg.membership();
        InventorySessionServer sessions = InventorySessionServer.create(source, m.cluster(), m.incarnation(), m::view, SessionConfig.defaults());
        registry.addService(sessions.bindableService());
        m.addListener(e -> sessions.onMembership(m.view()));
        System.out.println("pressure-peer ready port=" + server.getPort() + " incarnation=" + m.incarnation() + " head=" + source.headSequence()
                + " pid=" + ProcessHandle.current().pid());
        System.out.flush();

        long[][] log = new long[ticksMax][];
        int[] n = {0};
        StopFlag stop = new StopFlag();
        Thread loop = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                switch (line.strip()) {
                    case "start" -> {
                        loop = Thread.ofPlatform().name("pressure-source").start(() -> sourceLoop(source, keys, state, burst, period, log, n, stop));
                        System.out.println("pressure-peer started");
                    }
                    case "stop" -> {
                        stop.stopped = true;
                        if (loop != null) {
                            loop.join();
                        }
                        writeLog(out.resolve("source-ticks.csv"), log, n[0]);
                        writeState(out.resolve("source-final-state.csv"), keys, state);
                        System.out.println("pressure-peer stopped head=" + source.headSequence() + " ticks=" + n[0]);
                    }
                    case "exit" -> {
                        sessions.close();
                        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                        m.close();
                        System.out.println("pressure-peer exited");
                        System.out.flush();
                        System.exit(0);
                    }
                    default -> System.out.println("pressure-peer unknown command '" + line + "'");
                }
                System.out.flush();
            }
        }
        System.exit(0);
    }

    /** A mutable stop flag shared with the loop thread. */
    private static final class StopFlag {
        volatile boolean stopped;
    }

    private static void sourceLoop(InventorySource source, List<StateKey> keys, long[] state, int burst, long period, long[][] log, int[] n,
            StopFlag stop) {
        SplittableRandom random = new SplittableRandom(20261201L);
        long next = System.nanoTime();
        long lastFire = Long.MIN_VALUE;
        while (!stop.stopped && n[0] < log.length) {
            long at = lastFire == Long.MIN_VALUE ? next : Math.max(next, lastFire + period / 2);
            for (long w = at - System.nanoTime(); w > 0; w = at - System.nanoTime()) {
                LockSupport.parkNanos(w); // the declared source cadence, not a synchronization (parkNanos may return early)
            }
            long wake = System.nanoTime();
            long firstPub = -1;
            MutationResult.Recorded last = null;
            for (int i = 0; i < burst; i++) {
                int ki = random.nextInt(keys.size());
                StateKey k = keys.get(ki);
                boolean delete = i < burst - 1 && random.nextInt(10) == 0;
                MutationResult res = delete ? source.delete(k, Medium.DRAM) : source.put(k, Medium.DRAM, 4096 + random.nextInt(4096));
                if (res instanceof MutationResult.Recorded rec) {
                    state[ki] = delete ? -1 : rec.sequence();
                    if (firstPub < 0) {
                        firstPub = rec.publishedMonoNanos();
                    }
                    last = rec;
                }
            }
            lastFire = last.publishedMonoNanos(); // the next burst's earliest start: half a period after this publication
            log[n[0]++] = new long[] {at, wake, firstPub, last.publishedMonoNanos(), last.sequence()};
            next += period;
        }
    }

    private static void writeLog(Path p, long[][] log, int n) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(p))) {
            w.println("scheduled_ns,wake_ns,first_publication_ns,last_publication_ns,terminal_sequence");
            for (int i = 0; i < n; i++) {
                long[] t = log[i];
                w.println(t[0] + "," + t[1] + "," + t[2] + "," + t[3] + "," + t[4]);
            }
        }
    }

    /** The peer's final resident state of its keys ({@code -1} = not resident), for the key-by-key check. */
    private static void writeState(Path p, List<StateKey> keys, long[] state) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(p))) {
            w.println("key_hex,medium,sequence");
            for (int i = 0; i < keys.size(); i++) {
                w.println(HexFormat.of().formatHex(keys.get(i).key()) + ",DRAM," + state[i]);
            }
        }
    }

    /** The classpath of a child JVM running harness classes: this JVM's test classes, classes and every jar. */
    static String childClassPath() {
        List<String> entries = new ArrayList<>();
        try {
            entries.add(Path.of(PressurePeer.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        } catch (Exception e) {
            entries.add(Path.of(System.getProperty("orbitkv.root", "."), "conformance", "target", "test-classes").toString());
        }
        for (String prop : List.of("jdk.module.path", "java.class.path")) {
            for (String e : System.getProperty(prop, "").split(File.pathSeparator)) {
                if (!e.isBlank() && Files.exists(Path.of(e)) && !entries.contains(e)) {
                    entries.add(e);
                }
            }
        }
        return String.join(File.pathSeparator, entries);
    }
}
