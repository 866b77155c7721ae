package orbitkv.inventory.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.testing.SeededTries;
import orbitkv.testing.SeededTries.Gen;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.SourceFrame;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The encoder's bytes equal the generated classes' serialization of the same content (SES-9, SES-12, PUB-9):
 * random sessions and views (zero halves included), frame numbers, ordinals, intervals, 1..4 namespaces of
 * 1..255 bytes, keys of 1..64 bytes, both media, puts and deletes, sequences 1..2^63-1, sizes 0..2^63-1,
 * empty record lists.
 */
@Tag("unit")
class SourceFrameEncoderProperties {
    private static final HexFormat HEX = HexFormat.of();

    record PageCase(UUID session, long frameNumber, UUID view, long ordinal, List<ResidenceRecord> records) {}

    record DeltaCase(UUID session, long frameNumber, Interval interval, List<ResidenceRecord> records) {}

    @Test
    @DisplayName("SES-9 SES-12 PUB-9 an encoded snapshot page is byte-identical to the generated serialization (1,000 seeded tries)")
    void pageIsByteIdentical() {
        SeededTries.run("pageIsByteIdentical", 1_000, 20261129L, SourceFrameEncoderProperties::page,
                SourceFrameEncoderProperties::pageIsByteIdentical);
    }

    private static void pageIsByteIdentical(PageCase c) {
        UnnumberedFrame u = SourceFrameEncoder.page(c.session(), c.view(), c.ordinal(), c.records());
        byte[] expected = WireReference.page(c.session(), c.frameNumber(), c.view(), c.ordinal(), c.records()).toByteArray();
        assertThat(u.encodedBytes()).isEqualTo(expected.length);
        EncodedFrame f = u.number(c.frameNumber());
        assertThat(HEX.formatHex(f.toByteArray())).isEqualTo(HEX.formatHex(expected));
        assertThat(f.body()).isEqualTo(SourceFrame.BodyCase.SNAPSHOT_PAGE);
    }

    @Test
    @DisplayName("SES-9 SES-12 PUB-9 an encoded delta is byte-identical to the generated serialization; its measured size is the widest-session frame's (1,000 seeded tries)")
    void deltaIsByteIdentical() {
        SeededTries.run("deltaIsByteIdentical", 1_000, 20261130L, SourceFrameEncoderProperties::delta,
                SourceFrameEncoderProperties::deltaIsByteIdentical);
    }

    private static void deltaIsByteIdentical(DeltaCase c) {
        UnnumberedFrame u = SourceFrameEncoder.delta(c.session(), c.interval(), c.records());
        SourceFrame reference = WireReference.delta(c.session(), c.frameNumber(), c.interval(), c.records());
        byte[] expected = reference.toByteArray();
        assertThat(u.encodedBytes()).isEqualTo(expected.length);
        EncodedFrame f = u.number(c.frameNumber());
        assertThat(HEX.formatHex(f.toByteArray())).isEqualTo(HEX.formatHex(expected));
        assertThat(f.body()).isEqualTo(SourceFrame.BodyCase.DELTA);
        // The partitioner's measure: the same as FrameCodec's (widest session id, any frame number).
        assertThat(SourceFrameEncoder.deltaFrameEncodedBytes(c.interval(), c.records()))
                .isEqualTo(FrameCodec.frameEncodedBytes(reference.getDelta()));
    }

    static PageCase page(Gen g) {
        return new PageCase(uuid(g), frameNumber(g), uuid(g), g.longIn(0, Long.MAX_VALUE), records(g, false));
    }

    static DeltaCase delta(Gen g) {
        long from = g.longIn(0, Long.MAX_VALUE);
        return new DeltaCase(uuid(g), frameNumber(g), new Interval(from, g.longIn(from, Long.MAX_VALUE)), records(g, true));
    }

    private static long frameNumber(Gen g) {
        return g.longIn(1, Long.MAX_VALUE);
    }

    /** Random UUIDs with a zero half (omitted on the wire) in about a quarter of the cases each. */
    private static UUID uuid(Gen g) {
        return new UUID(g.oneIn(4) ? 0 : g.anyLong(), g.oneIn(4) ? 0 : g.anyLong());
    }

    private static List<ResidenceRecord> records(Gen g, boolean deletes) {
        List<Namespace> table = g.list(1, 4, x -> new Namespace(x.bytes(1, 255)));
        return g.list(0, 40, x -> record(x, table, deletes));
    }

    private static ResidenceRecord record(Gen g, List<Namespace> table, boolean deletes) {
        StateKey k = new StateKey(g.oneOf(table), g.bytes(1, StateKey.MAX_KEY_BYTES));
        Medium m = g.oneOf(Medium.values());
        boolean d = deletes && g.bool();
        long seq = g.longIn(1, Long.MAX_VALUE);
        return d ? ResidenceRecord.delete(k, m, seq) : ResidenceRecord.put(k, m, seq, g.longIn(0, Long.MAX_VALUE));
    }
}
