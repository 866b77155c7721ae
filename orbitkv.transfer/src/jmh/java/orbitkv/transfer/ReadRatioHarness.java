package orbitkv.transfer;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import orbitkv.testing.ContractVerdicts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * READ throughput against its baseline, measured side by side in one run, in alternating order (issue 13's
 * ratios; a harness, not a test: its name matches no surefire pattern, so the default build never runs it).
 *
 * <p>For each block size, each round moves 16 MiB: TCP READ (8 in flight, verified) vs a raw loopback socket copy
 * of the same arena bytes ({@link RawLoopback}); shared-memory READ (verified) vs {@link MemorySegment#copy}, and
 * copy + CRC32C (the bound of any verified READ). Pairs run in ABBA order so drift on a shared machine hits
 * both sides alike; the harness prints the median throughput of each and the median, min and max of the
 * per-pair ratios. Grants are issued and released outside the timed part. TCP READ is also measured against the raw
 * socket copy plus CRC32C over the received bytes (the bound of a verified READ). The frozen contracts are judged
 * through {@link ContractVerdicts} and any FAIL fails the harness (issue 37 item 1).
 *
 * <pre>
 * mvn -B -pl orbitkv.transfer -am test -Dtest=ReadRatioHarness -Dsurefire.failIfNoSpecifiedTests=false \
 *     [-Dbench.blocks=65536,1048576,16777216] [-Dbench.warmup=3] [-Dbench.rounds=20] [-Dbench.io=IO_URING]
 *     [-Dbench.readsPerConnection=4] [-Dbench.warmupReads=20000]
 * </pre>
 */
@Tag("qualification")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ReadRatioHarness {
    @Test
    void ratios() throws Exception {
        int[] sizes = Arrays.stream(System.getProperty("bench.blocks", "65536,1048576,16777216").split(","))
                .mapToInt(Integer::parseInt).toArray();
        int warmup = Integer.getInteger("bench.warmup", 3);
        int warmupReads = Integer.getInteger("bench.warmupReads", 20_000);
        int rounds = Integer.getInteger("bench.rounds", 20);
        NativeIo io = NativeIo.valueOf(System.getProperty("bench.io", NativeIo.detect().name()));
        System.out.printf("ReadRatioHarness: %d warm-up READs of 64 KiB per backend first, then %d warm-up + %d measured"
                + " pairs per cell, 16 MiB per round, %s, %d READs per connection, %d cores, load %s%n", warmupReads, warmup,
                rounds, io, BenchSource.readsPerConnection(), Runtime.getRuntime().availableProcessors(), loadAverage());
        warmUp(io, warmupReads);
        ContractVerdicts verdicts = new ContractVerdicts("ReadRatioHarness", System.out::println);
        System.out.println("| block | READ | READ GB/s (median) | baseline | baseline GB/s (median) | ratio median | ratio min..max |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (int size : sizes) {
            try (BenchSource s = new BenchSource(size, BenchSource.blocksPerOp(size), io)) {
                MemorySegment[] arena = new MemorySegment[s.refs.size()];
                for (int i = 0; i < arena.length; i++) {
                    arena[i] = s.arenaBytes(i);
                }
                double[] tcpRaw;
                double[] tcpCrc;
                try (RawLoopback raw = new RawLoopback(arena[0], s.destinations[0])) {
                    tcpRaw = cell(size, "TCP", () -> timed(s, BackendPolicy.TCP_ONLY, 8), "raw loopback socket",
                            () -> timed(() -> raw.receive(BenchSource.BYTES_PER_OP)), warmup, rounds);
                    tcpCrc = cell(size, "TCP", () -> timed(s, BackendPolicy.TCP_ONLY, 8), "raw loopback socket + CRC32C (verified bound)",
                            () -> timed(() -> raw.receiveAndCrc(BenchSource.BYTES_PER_OP)), warmup, rounds);
                }
                cell(size, "shared memory", () -> timed(s, BackendPolicy.SHARED_MEMORY_PREFERRED, 64), "MemorySegment.copy",
                        () -> timed(() -> {
                            for (int i = 0; i < arena.length; i++) {
                                MemorySegment.copy(arena[i], 0, s.destinations[i], 0, size);
                            }
                        }), warmup, rounds);
                double[] shmCrc = cell(size, "shared memory", () -> timed(s, BackendPolicy.SHARED_MEMORY_PREFERRED, 64),
                        "copy + CRC32C (verified-copy bound)",
                        () -> timed(() -> BenchSource.copyAndCrc(arena, s.destinations, size)), warmup, rounds);
                judge(verdicts, size, tcpRaw, tcpCrc, shmCrc);
            }
        }
        verdicts.enforce(); // a FAIL fails the harness (issue 37 item 1)
    }

    /** READ at or above 1 MiB: a verified READ's floor is copy + CRC32C (issue 13's proposal, accepted in issue 37). */
    static final int VERIFIED_BOUND_BLOCK_MIN = 1 << 20;
    /** TCP and shared-memory READ ÷ copy + CRC32C at ≥ 1 MiB (issue 37). */
    static final double VERIFIED_RATIO_MIN = 0.8;

    /**
     * The frozen READ contracts of docs/performance.md section 5: READ ÷ copy + CRC32C ≥ 0.8 at ≥ 1 MiB for TCP and
     * shared memory (issue 37), and issue 24's TCP READ ÷ a raw loopback socket copy (≥ 0.6 at 64 KiB, ≥ 0.8 at 1 MiB
     * and above). Other sizes are reported, not judged.
     */
    static void judge(ContractVerdicts v, int size, double[] tcpRaw, double[] tcpCrc, double[] shmCrc) {
        String block = size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB";
        if (size >= VERIFIED_BOUND_BLOCK_MIN) {
            v.atLeast("TCP READ / raw socket + CRC32C, " + block + " (issue 37)", VERIFIED_RATIO_MIN, median(tcpCrc), "", spread(tcpCrc));
            v.atLeast("shared-memory READ / copy + CRC32C, " + block + " (issue 37)", VERIFIED_RATIO_MIN, median(shmCrc), "", spread(shmCrc));
            v.atLeast("TCP READ / raw loopback socket, " + block + " (issue 24)", 0.8, median(tcpRaw), "", spread(tcpRaw));
        } else if (size == 64 << 10) {
            v.atLeast("TCP READ / raw loopback socket, 64 KiB (issue 24)", 0.6, median(tcpRaw), "", spread(tcpRaw));
        }
    }

    private static String spread(double[] r) {
        return String.format(java.util.Locale.ROOT, "per pair %.2f..%.2f", Arrays.stream(r).min().orElse(Double.NaN),
                Arrays.stream(r).max().orElse(Double.NaN));
    }

    /**
     * Runs {@code reads} READs of 64 KiB blocks on each backend, and as many raw receives, unrecorded: the per-READ
     * paths (engine, Netty, the source) need thousands of calls before C2 compiled them, far more than a few rounds of
     * large blocks make (3 rounds of 16 MiB blocks are 3 READs). Without it the first cells measured interpreted code.
     */
    private static void warmUp(NativeIo io, int reads) throws Exception {
        int size = 64 << 10;
        try (BenchSource s = new BenchSource(size, BenchSource.blocksPerOp(size), io);
                RawLoopback raw = new RawLoopback(s.arenaBytes(0), s.destinations[0])) {
            for (int done = 0; done < reads; done += s.refs.size()) {
                timed(s, BackendPolicy.TCP_ONLY, 8);
                timed(s, BackendPolicy.SHARED_MEMORY_PREFERRED, 64);
                raw.receive(BenchSource.BYTES_PER_OP);
            }
        }
    }

    interface Timed {
        long nanos() throws Exception;
    }

    interface Body {
        void run() throws Exception;
    }

    private static long timed(Body b) throws Exception {
        long t0 = System.nanoTime();
        b.run();
        return System.nanoTime() - t0;
    }

    private static long timed(BenchSource s, BackendPolicy policy, int window) {
        s.authorizeAll();
        long t0 = System.nanoTime();
        s.readAll(policy, window);
        long t = System.nanoTime() - t0;
        s.releaseAll();
        return t;
    }

    /** Runs one ABBA cell, prints its row, returns the per-pair ratios (baseline time / READ time). */
    private static double[] cell(int size, String read, Timed a, String baseline, Timed b, int warmup, int rounds)
            throws Exception {
        for (int i = 0; i < warmup; i++) {
            a.nanos();
            b.nanos();
        }
        List<Double> ra = new ArrayList<>();
        List<Double> rb = new ArrayList<>();
        double[] ratio = new double[rounds];
        for (int i = 0; i < rounds; i++) {
            long ta;
            long tb;
            if (i % 2 == 0) { // ABBA
                ta = a.nanos();
                tb = b.nanos();
            } else {
                tb = b.nanos();
                ta = a.nanos();
            }
            ra.add(gbps(ta));
            rb.add(gbps(tb));
            ratio[i] = (double) tb / ta;
        }
        System.out.printf("| %d KiB | %s | %.2f | %s | %.2f | %.2f | %.2f..%.2f |%n", size >> 10, read, median(ra), baseline,
                median(rb), median(ratio), Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0));
        return ratio;
    }

    private static double gbps(long nanos) {
        return BenchSource.BYTES_PER_OP / (double) nanos;
    }

    private static double median(double[] xs) {
        return median(Arrays.stream(xs).boxed().toList());
    }

    private static double median(List<Double> xs) {
        double[] v = xs.stream().mapToDouble(x -> x).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}
