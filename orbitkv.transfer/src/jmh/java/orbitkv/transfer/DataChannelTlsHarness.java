package orbitkv.transfer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import orbitkv.testing.TestCerts;
import orbitkv.transfer.frame.TlsContexts;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 33's goal "data channel TLS ≥ 0.6 of plaintext TCP": the same peer READs (8 in flight, verified, DRAM
 * blocks, 16 MiB per round: 16 × 1 MiB, 256 × 64 KiB) over a plaintext data channel and over mutual TLS, side by side
 * in one run, in ABBA order. Prints median throughput of each, and the median, min and max of the per-pair ratio
 * TLS / plaintext. A harness, not a test (its name matches no surefire pattern; lane {@code qualification}).
 *
 * <pre>
 * mvn -B -pl orbitkv.transfer -am test -Dtest=DataChannelTlsHarness -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dorbitkv.test.groups=qualification [-Dbench.blocks=65536,1048576] [-Dbench.warmup=3] [-Dbench.rounds=20]
 *     [-Dbench.warmupReads=5000]
 * </pre>
 */
@Tag("qualification")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class DataChannelTlsHarness {
    @Test
    void tlsAgainstPlaintext() throws Exception {
        int[] sizes = Arrays.stream(System.getProperty("bench.blocks", "1048576,65536").split(","))
                .mapToInt(Integer::parseInt).toArray();
        int warmup = Integer.getInteger("bench.warmup", 3);
        int rounds = Integer.getInteger("bench.rounds", 20);
        int warmupReads = Integer.getInteger("bench.warmupReads", 5_000);
        NativeIo io = NativeIo.valueOf(System.getProperty("bench.io", NativeIo.detect().name()));
        Path dir = Files.createTempDirectory("orbitkv-tls-bench-");
        TestCerts certs = new TestCerts(dir);
        Path ca = certs.ca("cluster-ca");
        Path[] s = certs.leaf("source-a", "cluster-ca");
        Path[] r = certs.leaf("requester-b", "cluster-ca");
        DataChannelTls sourceTls = new DataChannelTls(s[0], s[1], ca);
        DataChannelTls engineTls = new DataChannelTls(r[0], r[1], ca);
        System.out.printf(Locale.ROOT, "DataChannelTlsHarness: provider %s, %s, %d cores, load %s, %d warm-up READs of 64 KiB"
                + " per arm, then %d warm-up + %d measured pairs per size, 16 MiB per round%n", TlsContexts.provider(), io,
                Runtime.getRuntime().availableProcessors(), Files.readString(Path.of("/proc/loadavg")).trim(), warmupReads,
                warmup, rounds);
        try (BenchSource wp = new BenchSource(64 << 10, BenchSource.blocksPerOp(64 << 10), io);
                BenchSource wt = new BenchSource(64 << 10, BenchSource.blocksPerOp(64 << 10), io, true, sourceTls, engineTls)) {
            for (int done = 0; done < warmupReads; done += wp.refs.size()) {
                timed(wp);
                timed(wt);
            }
        }
        System.out.println("| block | plaintext GB/s (median) | TLS GB/s (median) | TLS / plaintext median | min..max |");
        System.out.println("|---|---|---|---|---|");
        for (int size : sizes) {
            try (BenchSource plain = new BenchSource(size, BenchSource.blocksPerOp(size), io);
                    BenchSource tls = new BenchSource(size, BenchSource.blocksPerOp(size), io, true, sourceTls, engineTls)) {
                for (int i = 0; i < warmup; i++) {
                    timed(plain);
                    timed(tls);
                }
                List<Double> gp = new ArrayList<>();
                List<Double> gt = new ArrayList<>();
                List<Double> ratio = new ArrayList<>();
                for (int i = 0; i < rounds; i++) {
                    long tp;
                    long tt;
                    if (i % 2 == 0) { // ABBA
                        tp = timed(plain);
                        tt = timed(tls);
                    } else {
                        tt = timed(tls);
                        tp = timed(plain);
                    }
                    gp.add(BenchSource.BYTES_PER_OP / (double) tp);
                    gt.add(BenchSource.BYTES_PER_OP / (double) tt);
                    ratio.add((double) tp / tt);
                }
                System.out.printf(Locale.ROOT, "| %d KiB | %.2f | %.2f | %.2f | %.2f..%.2f |%n", size >> 10, median(gp),
                        median(gt), median(ratio), ratio.stream().mapToDouble(x -> x).min().orElse(0),
                        ratio.stream().mapToDouble(x -> x).max().orElse(0));
            }
        }
    }

    private static long timed(BenchSource s) {
        s.authorizeAll();
        long t0 = System.nanoTime();
        s.readAll(BackendPolicy.TCP_ONLY, 8);
        long t = System.nanoTime() - t0;
        s.releaseAll();
        return t;
    }

    private static double median(List<Double> xs) {
        double[] v = xs.stream().mapToDouble(x -> x).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
