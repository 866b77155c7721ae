package orbitkv.inventory;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import orbitkv.testing.SeededTries;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * SNAP-7: the transcript digest's two builder forms (records as a list, as the source digests its pages; as a
 * columnar {@link RecordBatch}, as the receiver digests what it decoded) give the digest of the canonical encoding of
 * docs/protocol.md, written here independently of the builder ({@link DataOutputStream}, big-endian) and hashed in one
 * call. Transcripts are random (1-4 namespaces of 1..255 bytes, keys of 1..64 bytes, puts and deletes, edge
 * sequences and sizes) and long enough to cross the builder's 16 KiB buffer several times, so any record can straddle
 * a flush. Each try derives everything from one printed seed.
 */
@Tag("unit")
class TranscriptDigestProperties {
    @Test
    @DisplayName("SNAP-7 list and columnar forms equal the reference encoding on random transcripts crossing the buffer (300 seeded tries)")
    void formsEqualReference() {
        SeededTries.run("formsEqualReference", 300, SeededTries.freshBaseSeed(), SeededTries.Gen::seed,
                TranscriptDigestProperties::sameDigest);
    }

    /** One frame of a transcript: a page (interval null) or a replay. */
    private record Frame(long number, long ordinal, Interval interval, List<ResidenceRecord> records) {}

    private static void sameDigest(long seed) throws IOException {
        Random rnd = new Random(seed);
        UUID view = new UUID(rnd.nextLong(), rnd.nextLong());
        byte[] scope = new byte[ScopeDigest.BYTES];
        rnd.nextBytes(scope);
        long s0 = rnd.nextLong(0, Long.MAX_VALUE);
        List<Namespace> namespaces = new ArrayList<>();
        for (int i = 1 + rnd.nextInt(4); i > 0; i--) {
            namespaces.add(new Namespace(bytes(rnd, 1 + (rnd.nextInt(4) == 0 ? 254 : rnd.nextInt(40)))));
        }
        List<Frame> frames = frames(rnd, namespaces);
        TranscriptDigest.Builder list = TranscriptDigest.builder().begin(1, view, new ScopeDigest(scope), s0);
        TranscriptDigest.Builder columnar = TranscriptDigest.builder().begin(1, view, new ScopeDigest(scope), s0);
        for (Frame f : frames) {
            if (f.interval() == null) {
                list.page(f.number(), f.ordinal(), f.records());
                columnar.page(f.number(), f.ordinal(), RecordBatch.of(f.records()));
            } else {
                list.replay(f.number(), f.interval(), f.records());
                columnar.replay(f.number(), f.interval(), RecordBatch.of(f.records()));
            }
        }
        byte[] canonical = reference(view, scope, s0, frames);
        TranscriptDigest expected = new TranscriptDigest(Hashing.murmur3_128().hashBytes(canonical).asBytes());
        assertThat(canonical.length).as("seed %d: the transcript crosses the 16 KiB buffer", seed).isGreaterThan(16 << 10);
        assertThat(list.finish()).as("seed %d: list form", seed).isEqualTo(expected);
        assertThat(columnar.finish()).as("seed %d: columnar form", seed).isEqualTo(expected);
    }

    /** Pages then replays, 20 to 120 KiB of records in all (some frames empty), strictly increasing frame numbers. */
    private static List<Frame> frames(Random rnd, List<Namespace> namespaces) {
        List<Frame> frames = new ArrayList<>();
        long number = 1;
        long bytes = 0;
        long target = (20 << 10) + rnd.nextInt(100 << 10);
        for (long ordinal = 1; bytes < target; ordinal++) {
            number += 1 + rnd.nextInt(3); // liveness frames may sit between transcript frames
            boolean replay = ordinal > 1 && rnd.nextInt(4) == 0;
            List<ResidenceRecord> records = new ArrayList<>();
            for (int n = rnd.nextInt(8) == 0 ? 0 : 1 + rnd.nextInt(400); n > 0; n--) {
                ResidenceRecord r = record(rnd, namespaces.get(rnd.nextInt(namespaces.size())));
                records.add(r);
                bytes += 20 + r.key().namespace().length() + r.key().keyLength();
            }
            long from = rnd.nextLong(0, Long.MAX_VALUE / 2);
            frames.add(new Frame(number, ordinal, replay ? new Interval(from, from + rnd.nextInt(1000)) : null, records));
        }
        return frames;
    }

    private static ResidenceRecord record(Random rnd, Namespace ns) {
        int keyLength = rnd.nextInt(4) == 0 ? (rnd.nextBoolean() ? 1 : StateKey.MAX_KEY_BYTES) : 1 + rnd.nextInt(StateKey.MAX_KEY_BYTES);
        StateKey key = new StateKey(ns, bytes(rnd, keyLength));
        Medium medium = rnd.nextBoolean() ? Medium.DRAM : Medium.SSD;
        long sequence = rnd.nextInt(8) == 0 ? Long.MAX_VALUE : 1 + rnd.nextLong(0, Long.MAX_VALUE - 1);
        if (rnd.nextInt(4) == 0) {
            return ResidenceRecord.delete(key, medium, sequence);
        }
        return ResidenceRecord.put(key, medium, sequence, rnd.nextInt(8) == 0 ? Long.MAX_VALUE : rnd.nextLong(0, 1L << 40));
    }

    private static byte[] bytes(Random rnd, int n) {
        byte[] b = new byte[n];
        rnd.nextBytes(b);
        return b;
    }

    /** The transcript in the canonical encoding of docs/protocol.md (SNAP-7), written field by field. */
    private static byte[] reference(UUID view, byte[] scope, long s0, List<Frame> frames) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.write(TranscriptDigest.DOMAIN.getBytes(StandardCharsets.US_ASCII));
        out.writeByte(0);
        out.writeByte(TranscriptDigest.VERSION);
        out.writeByte(1);
        out.writeLong(1);
        out.writeLong(view.getMostSignificantBits());
        out.writeLong(view.getLeastSignificantBits());
        out.write(scope);
        out.writeLong(s0);
        for (Frame f : frames) {
            out.writeByte(f.interval() == null ? 2 : 3);
            out.writeLong(f.number());
            if (f.interval() == null) {
                out.writeLong(f.ordinal());
            } else {
                out.writeLong(f.interval().from());
                out.writeLong(f.interval().to());
            }
            out.writeInt(f.records().size());
            for (ResidenceRecord r : f.records()) {
                out.writeByte(r.key().namespace().length());
                out.write(r.key().namespace().bytes());
                out.writeByte(r.key().keyLength());
                out.write(r.key().key());
                out.writeByte(r.medium() == Medium.DRAM ? 1 : 2);
                out.writeByte(r.isDelete() ? 2 : 1);
                out.writeLong(r.sequence());
                out.writeLong(r.sizeBytes());
            }
        }
        return bytes.toByteArray();
    }
}
