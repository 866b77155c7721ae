package orbitkv.inventory.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.SourceFrame;


/**
 * The encoder's bytes equal the generated classes' serialization of the same content (SES-9, SES-12, PUB-9):
 * random sessions and views (zero halves included), frame numbers, ordinals, intervals, 1..4 namespaces of
 * 1..255 bytes, keys of 1..64 bytes, both media, puts and deletes, sequences 1..2^63-1, sizes 0..2^63-1,
 * empty record lists.
 */
class SourceFrameEncoderProperties {
    private static final HexFormat HEX = HexFormat.of();

    record PageCase(UUID session, long frameNumber, UUID view, long ordinal, List<ResidenceRecord> records) {}

    record DeltaCase(UUID session, long frameNumber, Interval interval, List<ResidenceRecord> records) {}

    @Property(tries = 1_000, seed = "20261129")
    @Label("SES-9 SES-12 PUB-9 an encoded snapshot page is byte-identical to the generated serialization")
    void pageIsByteIdentical(@ForAll("pages") PageCase c) {
        UnnumberedFrame u = SourceFrameEncoder.page(c.session(), c.view(), c.ordinal(), c.records());
        byte[] expected = WireReference.page(c.session(), c.frameNumber(), c.view(), c.ordinal(), c.records()).toByteArray();
        assertThat(u.encodedBytes()).isEqualTo(expected.length);
        EncodedFrame f = u.number(c.frameNumber());
        assertThat(HEX.formatHex(f.toByteArray())).isEqualTo(HEX.formatHex(expected));
        assertThat(f.body()).isEqualTo(SourceFrame.BodyCase.SNAPSHOT_PAGE);
    }

    @Property(tries = 1_000, seed = "20261130")
    @Label("SES-9 SES-12 PUB-9 an encoded delta is byte-identical to the generated serialization; its measured size is the widest-session frame's")
    void deltaIsByteIdentical(@ForAll("deltas") DeltaCase c) {
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

    @Provide
    Arbitrary<PageCase> pages() {
        return Combinators.combine(uuids(), frameNumbers(), uuids(), Arbitraries.longs().between(0, Long.MAX_VALUE),
                records(false)).as(PageCase::new);
    }

    @Provide
    Arbitrary<DeltaCase> deltas() {
        Arbitrary<Interval> intervals = Arbitraries.longs().between(0, Long.MAX_VALUE)
                .flatMap(from -> Arbitraries.longs().between(from, Long.MAX_VALUE).map(to -> new Interval(from, to)));
        return Combinators.combine(uuids(), frameNumbers(), intervals, records(true)).as(DeltaCase::new);
    }

    private static Arbitrary<Long> frameNumbers() {
        return Arbitraries.longs().between(1, Long.MAX_VALUE);
    }

    /** Random UUIDs with a zero half (omitted on the wire) in about a quarter of the cases each. */
    private static Arbitrary<UUID> uuids() {
        Arbitrary<Long> half = Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.just(0L)), Tuple.of(3, Arbitraries.longs()));
        return Combinators.combine(half, half).as(UUID::new);
    }

    private static Arbitrary<List<ResidenceRecord>> records(boolean deletes) {
        Arbitrary<Namespace> namespace = Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(255).map(Namespace::new);
        return namespace.list().ofMinSize(1).ofMaxSize(4).flatMap(table -> record(table, deletes).list().ofMinSize(0).ofMaxSize(40));
    }

    private static Arbitrary<ResidenceRecord> record(List<Namespace> table, boolean deletes) {
        Arbitrary<StateKey> key = Combinators.combine(Arbitraries.of(table),
                Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(StateKey.MAX_KEY_BYTES)).as(StateKey::new);
        Arbitrary<Boolean> delete = deletes ? Arbitraries.of(false, true) : Arbitraries.just(false);
        return Combinators.combine(key, Arbitraries.of(Medium.class), delete, Arbitraries.longs().between(1, Long.MAX_VALUE),
                Arbitraries.longs().between(0, Long.MAX_VALUE)).as((k, m, d, seq, size) -> d
                        ? ResidenceRecord.delete(k, m, seq) : ResidenceRecord.put(k, m, seq, size));
    }
}
