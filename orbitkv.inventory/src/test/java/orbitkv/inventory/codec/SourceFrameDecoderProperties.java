package orbitkv.inventory.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import orbitkv.testing.SeededTries;
import orbitkv.inventory.wire.Delta;
import orbitkv.inventory.wire.Record;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * SES-9, SES-10, PUB-9: the direct page/delta reader ({@link SourceFrameDecoder}) decides exactly what the
 * generated parser followed by {@link FrameCodec} decides, on valid frames, frames with invalid field
 * values (unknown enums, overflowing fixed64, zero sequences, bad namespace indexes, empty or long keys,
 * disorder, duplicates, a decoded-size bound) and mutated bytes (truncation, flipped bytes, appended unknown
 * fields, repeated singular fields, two frames concatenated, which protobuf merges). Where it declines, the
 * generated parser is used, so the only requirement there is that a plain encoding is never declined.
 * Each try derives everything from one printed seed.
 */
@Tag("unit")
class SourceFrameDecoderProperties {
    private static final AtomicLong READ = new AtomicLong();
    private static final AtomicLong DECLINED = new AtomicLong();
    private static final AtomicLong UNPARSEABLE = new AtomicLong();
    private static final AtomicLong ACCEPTED = new AtomicLong();

    @Test
    @DisplayName("SES-9 SES-10 PUB-9 direct reader equals generated parser + FrameCodec on random and mutated frames (3,000 seeded tries)")
    void sameDecisionAsGenerated() {
        for (AtomicLong c : List.of(READ, DECLINED, UNPARSEABLE, ACCEPTED)) {
            c.set(0);
        }
        SeededTries.run("sameDecisionAsGenerated", 3000, SeededTries.freshBaseSeed(), SeededTries.Gen::seed,
                SourceFrameDecoderProperties::sameDecision);
        report();
    }

    private static void sameDecision(long seed) throws Exception {
        Random rnd = new Random(seed);
        SourceFrame frame = frame(rnd);
        byte[] bytes = frame.toByteArray();
        boolean mutated = rnd.nextInt(3) == 0;
        if (mutated) {
            bytes = mutate(rnd, bytes);
        }
        long decodedMax = rnd.nextInt(4) == 0 ? rnd.nextInt(2000) : 4 << 20;
        SourceFrameDecoder.Result fast = SourceFrameDecoder.decode(bytes, decodedMax);
        SourceFrame generated;
        try {
            generated = SourceFrame.parseFrom(bytes);
        } catch (InvalidProtocolBufferException e) {
            UNPARSEABLE.incrementAndGet();
            assertThat(fast).as("seed %d: unparseable bytes are left to the generated parser", seed)
                    .isInstanceOf(SourceFrameDecoder.Result.UseGenerated.class);
            return;
        }
        if (fast instanceof SourceFrameDecoder.Result.UseGenerated) {
            DECLINED.incrementAndGet();
            assertThat(mutated).as("seed %d: a plain page or delta encoding must be read directly", seed).isTrue();
            return;
        }
        READ.incrementAndGet();
        SourceFrameDecoder.Result.Read read = (SourceFrameDecoder.Result.Read) fast;
        assertThat(read.header()).as("seed %d: header fields", seed).isEqualTo(header(generated));
        if (generated.hasSnapshotPage()) {
            SnapshotPage p = generated.getSnapshotPage();
            FrameCodec.Decoded<?> expected = FrameCodec.decodeRecords(p.getNamespacesList(), p.getRecordsList(), null, decodedMax);
            assertThat(read.page()).as("seed %d: page records", seed).isEqualTo(expected);
            count(expected);
        } else {
            FrameCodec.Decoded<?> expected = FrameCodec.decodeDelta(generated.getDelta(), decodedMax);
            assertThat(read.delta()).as("seed %d: delta records", seed).isEqualTo(expected);
            count(expected);
        }
    }

    /**
     * SES-9: a record field may not run past its own record, even when the frame has more bytes after it.
     * Rows: the record's bytes as sent; in each the last field overruns the record by one byte (into the next
     * record's tag), which the generated parser refuses as truncated, so the direct reader must decline too.
     */
    @Test
    @DisplayName("SES-9 a record field overrunning its record (key length, varint, fixed64) is never read directly")
    void fieldOverrunningItsRecordIsDeclined() throws Exception {
        byte[][] overrunning = {
            {0x08, 0x00, 0x12, 0x04, 'a', 'b', 'c'}, // key length 4 with 3 bytes left
            {0x08, (byte) 0x80}, // namespace index varint continues past the record
            {0x29, 1, 2, 3, 4, 5, 6, 7}, // sequence: 7 of its 8 bytes
        };
        for (byte[] record : overrunning) {
            byte[] bytes = pageWithRecords(record, new byte[] {0x08, 0x00});
            assertThatThrownBy(() -> SourceFrame.parseFrom(bytes)).as("the generated parser refuses %s", Arrays.toString(record))
                    .isInstanceOf(InvalidProtocolBufferException.class);
            assertThat(SourceFrameDecoder.decode(bytes, 4 << 20)).as("direct reader on %s", Arrays.toString(record))
                    .isInstanceOf(SourceFrameDecoder.Result.UseGenerated.class);
        }
    }

    /** A SourceFrame holding a page of namespace "a" and the two given records' bytes, length-delimited. */
    private static byte[] pageWithRecords(byte[] first, byte[] second) {
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x11, 1, 0, 0, 0, 0, 0, 0, 0}); // page_ordinal 1 (fixed64)
        body.writeBytes(new byte[] {0x1a, 1, 'a'}); // namespaces ["a"]
        for (byte[] r : new byte[][] {first, second}) {
            body.write(0x22);
            body.write(r.length);
            body.writeBytes(r);
        }
        byte[] b = body.toByteArray();
        java.io.ByteArrayOutputStream frame = new java.io.ByteArrayOutputStream();
        frame.writeBytes(new byte[] {0x11, 2, 0, 0, 0, 0, 0, 0, 0}); // frame_number 2 (fixed64)
        frame.write(0x62); // snapshot_page, field 12
        frame.write(b.length);
        frame.writeBytes(b);
        return frame.toByteArray();
    }

    private static void report() {
        System.out.printf("SourceFrameDecoderProperties: %d read directly (%d accepted), %d declined to the generated parser, "
                + "%d unparseable%n", READ.get(), ACCEPTED.get(), DECLINED.get(), UNPARSEABLE.get());
        if (SeededTries.replaying()) {
            return;
        }
        assertThat(ACCEPTED.get()).as("some frames must decode successfully, or the property proves little").isPositive();
        assertThat(DECLINED.get()).as("some mutations must reach the generated parser").isPositive();
    }

    private static void count(FrameCodec.Decoded<?> d) {
        if (d instanceof FrameCodec.Decoded.Ok<?>) {
            ACCEPTED.incrementAndGet();
        }
    }

    private static SourceFrame header(SourceFrame f) {
        SourceFrame.Builder b = f.toBuilder();
        if (f.hasSnapshotPage()) {
            b.setSnapshotPage(f.getSnapshotPage().toBuilder().clearNamespaces().clearRecords());
        } else if (f.hasDelta()) {
            b.setDelta(f.getDelta().toBuilder().clearNamespaces().clearRecords());
        }
        return b.build();
    }

    // ------------------------------------------------------------------ generators

    private static SourceFrame frame(Random rnd) {
        SourceFrame.Builder f = SourceFrame.newBuilder();
        if (rnd.nextInt(8) != 0) {
            f.setSessionId(uuid(rnd));
        }
        f.setFrameNumber(wide(rnd));
        List<ByteString> table = namespaces(rnd);
        List<Record> records = records(rnd, table.size());
        if (rnd.nextBoolean()) {
            SnapshotPage.Builder p = SnapshotPage.newBuilder().setPageOrdinal(wide(rnd)).addAllNamespaces(table).addAllRecords(records);
            if (rnd.nextInt(8) != 0) {
                p.setViewId(uuid(rnd));
            }
            f.setSnapshotPage(p);
        } else {
            long from = rnd.nextInt(10) == 0 ? wide(rnd) : rnd.nextInt(50);
            long to = rnd.nextInt(10) == 0 ? wide(rnd) : from + rnd.nextInt(60);
            f.setDelta(Delta.newBuilder().setFrom(from).setTo(to).addAllNamespaces(table).addAllRecords(records));
        }
        return f.build();
    }

    private static Uuid uuid(Random rnd) {
        return Uuid.newBuilder().setMsb(rnd.nextInt(4) == 0 ? 0 : rnd.nextLong()).setLsb(rnd.nextInt(4) == 0 ? 0 : rnd.nextLong()).build();
    }

    /** Mostly small values, sometimes 0, the widest positive or a value above 2^63-1. */
    private static long wide(Random rnd) {
        return switch (rnd.nextInt(7)) {
            case 0 -> 0;
            case 1 -> Long.MAX_VALUE;
            case 2 -> -1 - rnd.nextInt(1000);
            default -> 1 + rnd.nextInt(100);
        };
    }

    private static List<ByteString> namespaces(Random rnd) {
        int n = rnd.nextInt(10) == 0 ? 0 : 1 + rnd.nextInt(3);
        List<ByteString> t = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int len = switch (rnd.nextInt(12)) {
                case 0 -> 0;
                case 1 -> 256;
                case 2 -> 255;
                default -> 1 + rnd.nextInt(3);
            };
            byte[] b = new byte[len];
            for (int j = 0; j < len; j++) {
                b[j] = (byte) ('a' + rnd.nextInt(3));
            }
            t.add(ByteString.copyFrom(b));
        }
        return t;
    }

    private static List<Record> records(Random rnd, int tableSize) {
        int n = rnd.nextInt(5) == 0 ? 0 : rnd.nextInt(12);
        boolean clean = rnd.nextBoolean();
        List<Record> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Record.Builder r = Record.newBuilder();
            // Out-of-range values span every varint width: 1 byte, 2 (200), 5 (2^30) and 10 (a negative int32).
            r.setNamespaceIndex(clean || rnd.nextInt(10) != 0 ? (tableSize == 0 ? 0 : rnd.nextInt(tableSize))
                    : switch (rnd.nextInt(4)) {
                        case 0 -> -1;
                        case 1 -> 200;
                        case 2 -> 1 << 30;
                        default -> tableSize;
                    });
            int keyLen = clean || rnd.nextInt(10) != 0 ? 1 + rnd.nextInt(3) : switch (rnd.nextInt(3)) {
                case 0 -> 0;
                case 1 -> 65;
                default -> 200; // a two-byte length
            };
            byte[] key = new byte[keyLen];
            for (int j = 0; j < keyLen; j++) {
                key[j] = (byte) rnd.nextInt(4);
            }
            r.setKey(ByteString.copyFrom(key));
            r.setMediumValue(clean || rnd.nextInt(10) != 0 ? 1 + rnd.nextInt(2) : rnd.nextInt(3) == 0 ? 0 : rnd.nextBoolean() ? 7 : 300);
            r.setOpValue(clean || rnd.nextInt(10) != 0 ? 1 + rnd.nextInt(2) : rnd.nextBoolean() ? 0 : -3);
            r.setSequence(clean || rnd.nextInt(10) != 0 ? 1 + rnd.nextInt(60) : wide(rnd));
            r.setSizeBytes(r.getOpValue() == 2 && (clean || rnd.nextBoolean()) ? 0 : rnd.nextInt(10) == 0 ? wide(rnd) : rnd.nextInt(5000));
            out.add(r.build());
        }
        if (clean) {
            // Sorted by (namespace bytes, key, medium) most of the time, so some frames decode successfully.
            out.sort((a, b) -> {
                int c = tableSize == 0 ? 0 : ByteString.unsignedLexicographicalComparator().compare(
                        nsOf(a, tableSize), nsOf(b, tableSize));
                return c != 0 ? c : c(a, b);
            });
        }
        return out;
    }

    private static ByteString nsOf(Record r, int tableSize) {
        return ByteString.copyFromUtf8("" + r.getNamespaceIndex()); // table order stands in for namespace order
    }

    private static int c(Record a, Record b) {
        int c = ByteString.unsignedLexicographicalComparator().compare(a.getKey(), b.getKey());
        return c != 0 ? c : Integer.compare(a.getMediumValue(), b.getMediumValue());
    }

    private static byte[] mutate(Random rnd, byte[] bytes) {
        return switch (rnd.nextInt(7)) {
            case 0 -> Arrays.copyOf(bytes, bytes.length == 0 ? 0 : rnd.nextInt(bytes.length));
            case 1 -> {
                byte[] b = bytes.clone();
                if (b.length > 0) {
                    b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
                yield b;
            }
            case 2 -> concat(bytes, new byte[] {(byte) 0x98, 0x06, 0x01}); // field 99 varint: unknown
            case 3 -> concat(bytes, SourceFrame.newBuilder().setFrameNumber(7).build().toByteArray()); // repeated singular
            case 4 -> concat(bytes, frame(rnd).toByteArray()); // two frames: protobuf merges them
            case 5 -> concat(bytes, SourceFrame.newBuilder().setSessionId(uuid(rnd)).build().toByteArray()); // merged session id
            default -> concat(bytes, new byte[] {0x62, 0x02, 0x22, 0x00}); // page field again holding one empty record
        };
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
