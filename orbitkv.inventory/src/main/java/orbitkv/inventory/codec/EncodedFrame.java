package orbitkv.inventory.codec;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Objects;
import orbitkv.inventory.wire.SourceFrame;

/**
 * One complete, numbered, encoded {@code SourceFrame} ready for the wire, with its body kind (for the
 * frames-by-kind metric). The server's response {@link #marshaller()} hands the bytes to gRPC as a
 * {@link KnownLength} {@link Drainable} stream, so gRPC copies them once into its own buffer and no
 * protobuf message is built for data frames.
 *
 * <p>The array is owned by this frame: nothing writes it after {@link UnnumberedFrame#number}.
 */
public final class EncodedFrame {
    private static final MethodDescriptor.Marshaller<EncodedFrame> MARSHALLER = new Marshaller();

    private final byte[] bytes;
    private final SourceFrame.BodyCase body;

    EncodedFrame(byte[] bytes, SourceFrame.BodyCase body) {
        this.bytes = Objects.requireNonNull(bytes, "bytes must not be null");
        this.body = Objects.requireNonNull(body, "body must not be null");
    }

    /** A frame built by the generated classes (control frames: OpenAccepted, Liveness, Error). */
    public static EncodedFrame of(SourceFrame frame) {
        return new EncodedFrame(frame.toByteArray(), frame.getBodyCase());
    }

    public int encodedBytes() {
        return bytes.length;
    }

    public SourceFrame.BodyCase body() {
        return body;
    }

    /** A copy of the encoded bytes. */
    public byte[] toByteArray() {
        return bytes.clone();
    }

    /** The gRPC response marshaller of the source side: streams the bytes; parses a SourceFrame back. */
    public static MethodDescriptor.Marshaller<EncodedFrame> marshaller() {
        return MARSHALLER;
    }

    /** The frame's bytes as a stream gRPC drains in one copy. */
    InputStream stream() {
        return new FrameStream(bytes);
    }

    private static final class Marshaller implements MethodDescriptor.Marshaller<EncodedFrame> {
        @Override
        public InputStream stream(EncodedFrame value) {
            return value.stream();
        }

        /** Only a client using this descriptor parses; the bytes are checked to be one SourceFrame. */
        @Override
        public EncodedFrame parse(InputStream stream) {
            try {
                byte[] b = stream.readAllBytes();
                return new EncodedFrame(b, SourceFrame.parseFrom(b).getBodyCase());
            } catch (IOException e) {
                throw Status.INTERNAL.withDescription("source frame is not parseable").withCause(e).asRuntimeException();
            }
        }
    }

    /** The bytes as an {@link InputStream} whose remaining length is known and which drains in one write. */
    static final class FrameStream extends ByteArrayInputStream implements KnownLength, Drainable {
        FrameStream(byte[] bytes) {
            super(bytes);
        }

        @Override
        public synchronized int drainTo(OutputStream target) throws IOException {
            int n = count - pos;
            target.write(buf, pos, n);
            pos = count;
            return n;
        }
    }
}
