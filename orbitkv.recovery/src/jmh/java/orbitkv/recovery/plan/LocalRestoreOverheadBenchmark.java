package orbitkv.recovery.plan;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.recovery.Demand;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.Plan;
import orbitkv.recovery.Restore;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.recovery.RoutePolicy;
import orbitkv.recovery.RouteSelection;
import orbitkv.recovery.TraceSampling;
import orbitkv.recovery.TransferPorts;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What the planner adds to a local-only restore (issue 14 goal: <= 5 %), side by side in one run, per request of
 * {@code keys} blocks of {@code blockBytes} held in local DRAM (an off-heap arena standing for the DRAM tier):
 * <ul>
 *   <li>{@code directAnswer}: today's path: pick each key's local residence directly and copy its bytes into the
 *       response destination (the baseline);
 *   <li>{@code plannedAnswer}: build Demand + Evidence, call the planner (FIXED), copy the planned routes' blocks;
 *   <li>{@code selectionRestore}: the whole library path, {@link RouteSelection#restore} with trivial local ports
 *       that copy (planner, executor with its futures and state machine, observations, trace ring);
 *   <li>{@code directChoiceOnly} / {@code plannerOnly}: the choice alone without copying, to show the raw cost.
 * </ul>
 * Overhead = (plannedAnswer or selectionRestore - directAnswer) / directAnswer. The real end-to-end figure (HTTP,
 * pins, tiers) is measured after the wiring.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class LocalRestoreOverheadBenchmark {
    @Param({"16", "128"})
    int keys;

    @Param({"16384", "65536"})
    int blockBytes;

    Namespace ns;
    List<StateKey> keyList;
    List<List<LocalResidence>> residences;
    Arena arena;
    MemorySegment dram;
    byte[] destination;
    Planner planner;
    RouteSelection selection;
    TransferPorts<byte[]> ports;

    @Setup(Level.Trial)
    public void setup() {
        ns = Namespace.utf8("bench-namespace");
        keyList = new ArrayList<>();
        residences = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            keyList.add(new StateKey(ns, ("chained-block-hash-" + i).getBytes(StandardCharsets.UTF_8)));
            residences.add(List.of(new LocalResidence(Medium.DRAM, 1_000 + i, blockBytes)));
        }
        arena = Arena.ofShared();
        dram = arena.allocate((long) keys * blockBytes, 64);
        for (long i = 0; i < dram.byteSize(); i += 8) {
            dram.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        destination = new byte[keys * blockBytes];
        planner = new Planner(RoutePolicy.defaults().withSelectionMode(orbitkv.recovery.SelectionMode.FIXED));
        selection = RouteSelection.create(RoutePolicy.defaults().withSelectionMode(orbitkv.recovery.SelectionMode.FIXED),
                TraceSampling.off(), System::nanoTime);
        ports = new LocalPorts();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        selection.close();
        arena.close();
    }

    private void copy(int index) {
        MemorySegment.copy(dram, ValueLayout.JAVA_BYTE, (long) index * blockBytes, destination, index * blockBytes, blockBytes);
    }

    @Benchmark
    public void directAnswer(Blackhole bh) {
        int restored = 0;
        for (int i = 0; i < keys; i++) {
            List<LocalResidence> r = residences.get(i);
            if (r.isEmpty()) {
                break;
            }
            LocalResidence pick = r.get(0);
            for (LocalResidence x : r) {
                if (x.medium() == Medium.DRAM) {
                    pick = x;
                }
            }
            bh.consume(pick.sequence());
            copy(i);
            restored++;
        }
        bh.consume(restored);
    }

    private Evidence evidence() {
        List<KeyEvidence> ev = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            ev.add(new KeyEvidence(keyList.get(i), residences.get(i), List.of(), false));
        }
        return Evidence.localOnly(ev);
    }

    @Benchmark
    public void plannedAnswer(Blackhole bh) {
        Plan p = planner.plan(Demand.hostReady(ns, keyList, System.nanoTime() + 1_000_000_000L), evidence(), 0, 0, new Exclusions(),
                c -> null);
        for (Route r : p.routes()) {
            int i = r.fromIndex();
            for (RouteBlock b : r.blocks()) {
                bh.consume(b.sequence());
                copy(i++);
            }
        }
        bh.consume(p.prefixKeys());
    }

    @Benchmark
    public void selectionRestore(Blackhole bh) {
        Restore<byte[]> r = selection.restore(Demand.hostReady(ns, keyList, System.nanoTime() + 1_000_000_000L), evidence(), ports);
        bh.consume(r.restoredKeys());
    }

    @Benchmark
    public void directChoiceOnly(Blackhole bh) {
        for (int i = 0; i < keys; i++) {
            bh.consume(residences.get(i).get(0).sequence());
        }
    }

    @Benchmark
    public Plan plannerOnly() {
        return planner.plan(Demand.hostReady(ns, keyList, 0), evidence(), 0, 0, new Exclusions(), c -> null);
    }

    /** Local ports: no window, the grant copies the route's blocks from the arena; ready and drained at once. */
    final class LocalPorts implements TransferPorts<byte[]> {
        private final CompletableFuture<ReadyOutcome> ready = CompletableFuture.completedFuture(new ReadyOutcome.Ready());
        private final CompletableFuture<Void> drained = CompletableFuture.completedFuture(null);

        @Override
        public CreditOutcome<byte[]> credits(Route route) {
            return new CreditOutcome.Held<>(new ReceiveCredit<>() {
                @Override
                public long bytes() {
                    return route.bytes();
                }

                @Override
                public byte[] destination() {
                    return destination;
                }

                @Override
                public void release() {}
            });
        }

        @Override
        public GrantOutcome<byte[]> authorize(Route route, long deadlineNanos) {
            return new GrantOutcome.Granted<>(new SourceGrant<>() {
                @Override
                public ReadSubmission read(byte[] dst) {
                    for (int i = route.fromIndex(); i < route.toIndex(); i++) {
                        copy(i);
                    }
                    return new ReadSubmission() {
                        @Override
                        public CompletableFuture<ReadyOutcome> ready() {
                            return ready;
                        }

                        @Override
                        public CompletableFuture<Void> drained() {
                            return drained;
                        }
                    };
                }

                @Override
                public void release() {}
            });
        }
    }
}
