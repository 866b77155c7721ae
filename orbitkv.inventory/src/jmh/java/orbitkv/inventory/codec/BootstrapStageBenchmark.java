package orbitkv.inventory.codec;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.InventoryConfig;
import orbitkv.inventory.InventorySource;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.RecordBatch;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.SnapshotScan;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The per-stage CPU a bootstrap of 1,000,000 residences needs, each stage alone on one thread, in ms per
 * bootstrap: the shape of {@code SessionBenchHarness} (one 21-byte namespace, 32-byte keys, alternating
 * DRAM/SSD, default 1,024-record pages). Summed with the raw gRPC CPU of the same bytes, these give a floor
 * on the core-seconds of a bootstrap with this protocol and these stage implementations, independent of
 * scheduling (docs/results/2026-11-29-inventory-session-bootstrap.md, "Is the goal reachable on two cores?").
 *
 * <ul>
 *   <li>{@code scan}: every page of a snapshot of the source's resident map ({@link SnapshotScan});</li>
 *   <li>{@code encode}: each page into its frame bytes, numbered and drained once (what gRPC receives);</li>
 *   <li>{@code digestSource}: the source's transcript digest over the pages (list form, SNAP-7);</li>
 *   <li>{@code encodeThenDigest}, {@code decodeThenDigest}: each page encoded (decoded) and then digested, as the
 *       source (receiver) does it in a session, the page's records still warm: the digest's cost in place;</li>
 *   <li>{@code decode}: each frame's bytes into a columnar {@link RecordBatch} (the requester's direct reader);</li>
 *   <li>{@code digestReceiver}: the receiver's transcript digest over the decoded batches;</li>
 *   <li>{@code sha256Only}: SHA-256 alone over as many bytes as the transcript has, in the digest's 16 KiB
 *       blocks: what either digest cost with the canonical encoding taken away, before transcript digest v2
 *       (SHA-NI on this machine);</li>
 *   <li>{@code murmur128Only}: the same bytes through MurmurHash3 x64 128 (Guava), the hash of transcript digest v2:
 *       side by side with {@code sha256Only} in one run (issue 15).</li>
 * </ul>
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class BootstrapStageBenchmark {
    static final int RESIDENCES = 1_000_000;
    static final long DECODED_BYTES_MAX = 16L << 20;

    InventorySource source;
    final UUID session = UUID.randomUUID();
    final UUID view = UUID.randomUUID();
    final List<List<ResidenceRecord>> pages = new ArrayList<>();
    final List<byte[]> frames = new ArrayList<>();
    final List<RecordBatch> batches = new ArrayList<>();
    long transcriptBytes;
    final byte[] block = new byte[16 << 10];

    @Setup
    public void setup() throws IOException {
        source = InventorySource.create(InventoryConfig.defaults().withJournalRecordsMax(4_000_000).withJournalBytesMax(1L << 30));
        Namespace ns = Namespace.utf8("bench/llama-3-8b/fp16");
        for (long i = 0; i < RESIDENCES; i++) {
            byte[] k = new byte[32];
            for (int b = 0; b < 8; b++) {
                k[b] = (byte) (i >>> (56 - 8 * b));
            }
            k[31] = (byte) 0x5a;
            source.put(new StateKey(ns, k), i % 2 == 0 ? Medium.DRAM : Medium.SSD, 4096);
        }
        SnapshotScan scan = source.openSnapshot(Scope.all());
        for (SnapshotScan.ScanStep s = scan.nextPage(); s instanceof SnapshotScan.ScanStep.Page p; s = scan.nextPage()) {
            pages.add(List.copyOf(p.records()));
        }
        for (int i = 0; i < pages.size(); i++) {
            frames.add(drained(i));
        }
        for (byte[] f : frames) {
            SourceFrameDecoder.Result.Read r = (SourceFrameDecoder.Result.Read) SourceFrameDecoder.decode(f, DECODED_BYTES_MAX);
            batches.add(((FrameCodec.Decoded.Ok<RecordBatch>) r.page()).value());
        }
        // docs/protocol.md: header 27, begin 65, per page 21 (kind, frame number, ordinal, count), per record 20 + names
        transcriptBytes = 27 + 65 + 21L * pages.size();
        for (List<ResidenceRecord> page : pages) {
            for (ResidenceRecord r : page) {
                transcriptBytes += 20 + r.key().namespace().length() + r.key().keyLength();
            }
        }
        new java.util.Random(1).nextBytes(block);
        if (!digestSource().equals(digestReceiver())) {
            throw new IllegalStateException("the two transcript digests disagree");
        }
        if (records() != RESIDENCES) {
            throw new IllegalStateException("decoded " + records() + " records, expected " + RESIDENCES);
        }
    }

    private long records() {
        long n = 0;
        for (RecordBatch b : batches) {
            n += b.size();
        }
        return n;
    }

    /** Stands for gRPC's buffer, as in FrameEncodeBenchmark (frames are at most 1 MiB). */
    final FrameEncodeBenchmark.Sink sink = new FrameEncodeBenchmark.Sink();

    private byte[] drained(int page) throws IOException {
        encodeOne(page);
        return java.util.Arrays.copyOf(sink.buf, sink.length);
    }

    private int encodeOne(int page) throws IOException {
        EncodedFrame f = SourceFrameEncoder.page(session, view, page + 1, pages.get(page)).number(page + 2);
        sink.length = 0;
        return ((io.grpc.Drainable) EncodedFrame.marshaller().stream(f)).drainTo(sink);
    }

    @Benchmark
    public long scan() {
        SnapshotScan scan = source.openSnapshot(Scope.all());
        long n = 0;
        for (SnapshotScan.ScanStep s = scan.nextPage(); s instanceof SnapshotScan.ScanStep.Page p; s = scan.nextPage()) {
            n += p.records().size();
        }
        return n;
    }

    @Benchmark
    public long encode() throws IOException {
        long bytes = 0;
        for (int i = 0; i < pages.size(); i++) {
            bytes += encodeOne(i);
        }
        return bytes;
    }

    @Benchmark
    public TranscriptDigest digestSource() {
        TranscriptDigest.Builder d = TranscriptDigest.builder();
        for (int i = 0; i < pages.size(); i++) {
            d.page(i + 2, i + 1, pages.get(i));
        }
        return d.finish();
    }

    /**
     * The source's page path as the session runs it: each page encoded, then walked again for the transcript digest
     * (list form) with its records still warm from the encoding. Minus {@code encode}, the digest's cost in place,
     * which the cold {@code digestSource} (every page long after it was scanned) overstates about twofold (issue 37
     * item 3).
     */
    @Benchmark
    public TranscriptDigest encodeThenDigest() throws IOException {
        TranscriptDigest.Builder d = TranscriptDigest.builder();
        for (int i = 0; i < pages.size(); i++) {
            encodeOne(i);
            d.page(i + 2, i + 1, pages.get(i));
        }
        return d.finish();
    }

    /** The receiver's path: each frame decoded, then the batch digested (still warm from the decoding). */
    @Benchmark
    public TranscriptDigest decodeThenDigest() {
        TranscriptDigest.Builder d = TranscriptDigest.builder();
        for (int i = 0; i < frames.size(); i++) {
            SourceFrameDecoder.Result.Read r = (SourceFrameDecoder.Result.Read) SourceFrameDecoder.decode(frames.get(i), DECODED_BYTES_MAX);
            d.page(i + 2, i + 1, ((FrameCodec.Decoded.Ok<RecordBatch>) r.page()).value());
        }
        return d.finish();
    }

    @Benchmark
    public long decode() {
        long n = 0;
        for (byte[] f : frames) {
            SourceFrameDecoder.Result.Read r = (SourceFrameDecoder.Result.Read) SourceFrameDecoder.decode(f, DECODED_BYTES_MAX);
            n += ((FrameCodec.Decoded.Ok<RecordBatch>) r.page()).value().size();
        }
        return n;
    }

    @Benchmark
    public byte[] sha256Only() throws java.security.NoSuchAlgorithmException {
        java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
        for (long done = 0; done < transcriptBytes; done += block.length) {
            sha.update(block, 0, (int) Math.min(block.length, transcriptBytes - done));
        }
        return sha.digest();
    }

    @Benchmark
    public byte[] murmur128Only() {
        com.google.common.hash.Hasher h = com.google.common.hash.Hashing.murmur3_128().newHasher();
        for (long done = 0; done < transcriptBytes; done += block.length) {
            h.putBytes(block, 0, (int) Math.min(block.length, transcriptBytes - done));
        }
        return h.hash().asBytes();
    }

    @Benchmark
    public TranscriptDigest digestReceiver() {
        TranscriptDigest.Builder d = TranscriptDigest.builder();
        for (int i = 0; i < batches.size(); i++) {
            d.page(i + 2, i + 1, batches.get(i));
        }
        return d.finish();
    }
}
