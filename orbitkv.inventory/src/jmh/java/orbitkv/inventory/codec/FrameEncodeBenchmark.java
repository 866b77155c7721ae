package orbitkv.inventory.codec;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.inventory.wire.Uuid;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Encoding one snapshot page of 1,024 records (32-byte keys, one 22-byte namespace, DRAM puts) into the
 * bytes handed to gRPC, in records/s: {@code encoder} = {@link SourceFrameEncoder#page} + numbering + the
 * one drain copy into a (reused) buffer standing for gRPC's;
 * {@code generated} = the previous path, {@link FrameCodec#encodeRecords} + SnapshotPage/SourceFrame
 * builders, sized at frame number 2^63-1, rebuilt with the real number, then {@code toByteArray()} (what
 * {@code ProtoUtils.marshaller} wrote); {@code encoderWithoutDrain} = encoding and numbering only. The
 * paths produce the same bytes (checked in setup).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class FrameEncodeBenchmark {
    static final int RECORDS = 1024;

    List<ResidenceRecord> page;
    UUID session;
    UUID view;
    Uuid wireSession;
    Uuid wireView;
    long frameNumber;

    @Setup
    public void setup() throws java.io.IOException {
        Namespace ns = Namespace.utf8("orbitkv-bench-namespace".substring(0, 22));
        page = new ArrayList<>(RECORDS);
        for (int i = 0; i < RECORDS; i++) {
            byte[] k = new byte[32];
            for (int j = 0; j < k.length; j++) {
                k[j] = (byte) (i * 31 + j * 7);
            }
            k[0] = (byte) (i >> 8);
            k[1] = (byte) i;
            page.add(ResidenceRecord.put(new StateKey(ns, k), Medium.DRAM, 1_000_000L + i, 4096 + i));
        }
        session = UUID.randomUUID();
        view = UUID.randomUUID();
        wireSession = Uuid.newBuilder().setMsb(session.getMostSignificantBits()).setLsb(session.getLeastSignificantBits()).build();
        wireView = Uuid.newBuilder().setMsb(view.getMostSignificantBits()).setLsb(view.getLeastSignificantBits()).build();
        frameNumber = 12_345;
        encoder();
        if (!java.util.Arrays.equals(java.util.Arrays.copyOf(sink.buf, sink.length), generated())) {
            throw new IllegalStateException("the two paths disagree");
        }
    }

    /** Stands for gRPC's buffer: the one copy the Drainable stream makes. */
    static final class Sink extends java.io.OutputStream {
        final byte[] buf = new byte[1 << 20];
        int length;

        @Override
        public void write(int b) {
            buf[length++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            System.arraycopy(b, off, buf, length, len);
            length += len;
        }
    }

    final Sink sink = new Sink();

    /** Encode, number, and drain once into the sink (the path SourceSession + EncodedFrame.marshaller take). */
    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public int encoder() throws java.io.IOException {
        EncodedFrame f = SourceFrameEncoder.page(session, view, 7, page).number(frameNumber);
        sink.length = 0;
        return ((io.grpc.Drainable) EncodedFrame.marshaller().stream(f)).drainTo(sink);
    }

    /** Encode and number only: the part SourceSession's pump does before gRPC copies the bytes. */
    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public EncodedFrame encoderWithoutDrain() {
        return SourceFrameEncoder.page(session, view, 7, page).number(frameNumber);
    }

    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public byte[] generated() {
        FrameCodec.EncodedRecords e = FrameCodec.encodeRecords(page);
        SourceFrame sized = SourceFrame.newBuilder().setSnapshotPage(SnapshotPage.newBuilder().setViewId(wireView)
                .setPageOrdinal(7).addAllNamespaces(e.namespaces()).addAllRecords(e.records()).build())
                .setSessionId(wireSession).setFrameNumber(Long.MAX_VALUE).build();
        int bytes = sized.getSerializedSize();
        SourceFrame f = sized.toBuilder().setFrameNumber(frameNumber).build();
        byte[] out = f.toByteArray();
        if (out.length != bytes) {
            throw new IllegalStateException("size changed with the frame number");
        }
        return out;
    }
}
