package orbitkv.inventory.session;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import orbitkv.inventory.codec.SourceFrameDecoder;
import orbitkv.inventory.wire.SourceFrame;

/**
 * One received message before or after parsing (SES-10): the encoded size is checked against the bound
 * before the message is parsed, so an oversized or unparseable frame is a named outcome, never an
 * allocation of its decoded form or a transport exception.
 */
sealed interface Inbound<T> {
    record Parsed<T>(T message, int encodedBytes) implements Inbound<T> {}

    record Oversized<T>(long encodedBytes, int boundBytes) implements Inbound<T> {}

    record Unparseable<T>(String detail) implements Inbound<T> {}

    /**
     * A snapshot page or delta read by {@link SourceFrameDecoder} without per-record messages: the frame's
     * header fields as a message and the codec's decision about its records.
     */
    record Read(SourceFrameDecoder.Result.Read frame, int encodedBytes) implements Inbound<SourceFrame> {}

    /**
     * The requester's marshaller of source frames: bounds by encoded size, then reads pages and deltas
     * with {@link SourceFrameDecoder} (records bounded by {@code decodedBytesMax}) and every other frame,
     * or anything that decoder leaves to them, with the generated parser.
     */
    static MethodDescriptor.Marshaller<Inbound<SourceFrame>> sourceFrames(int boundBytes, long decodedBytesMax) {
        MethodDescriptor.Marshaller<Inbound<SourceFrame>> generated = marshaller(SourceFrame.parser(), boundBytes);
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(Inbound<SourceFrame> value) {
                return generated.stream(value);
            }

            @Override
            public Inbound<SourceFrame> parse(InputStream in) {
                return bounded(in, boundBytes, bytes -> switch (SourceFrameDecoder.decode(bytes, decodedBytesMax)) {
                    case SourceFrameDecoder.Result.Read r -> new Read(r, bytes.length);
                    case SourceFrameDecoder.Result.UseGenerated g -> parsed(SourceFrame.parser(), bytes);
                });
            }
        };
    }

    /** A marshaller that bounds by encoded size, then parses. */
    static <T extends MessageLite> MethodDescriptor.Marshaller<Inbound<T>> marshaller(Parser<T> parser, int boundBytes) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(Inbound<T> value) {
                if (value instanceof Parsed<T> p) {
                    return new ByteArrayInputStream(p.message().toByteArray());
                }
                throw new IllegalStateException("only parsed messages are sent");
            }

            @Override
            public Inbound<T> parse(InputStream in) {
                return bounded(in, boundBytes, bytes -> parsed(parser, bytes));
            }
        };
    }

    /** Reads one message of at most {@code boundBytes}, or names it oversized, before anything is parsed. */
    private static <T> Inbound<T> bounded(InputStream in, int boundBytes, java.util.function.Function<byte[], Inbound<T>> parse) {
        try {
            long size = in instanceof KnownLength ? in.available() : -1;
            if (size > boundBytes) {
                in.skip(size);
                return new Oversized<>(size, boundBytes);
            }
            // A known length is read into an exact array in one pass; otherwise read at most bound + 1.
            byte[] bytes = size >= 0 ? readExactly(in, (int) size) : in.readNBytes(boundBytes + 1);
            if (bytes.length > boundBytes) {
                return new Oversized<>(bytes.length, boundBytes);
            }
            return parse.apply(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static <T> Inbound<T> parsed(Parser<T> parser, byte[] bytes) {
        try {
            return new Parsed<>(parser.parseFrom(bytes), bytes.length);
        } catch (InvalidProtocolBufferException e) {
            return new Unparseable<>(e.getMessage());
        }
    }

    private static byte[] readExactly(InputStream in, int size) throws IOException {
        byte[] bytes = new byte[size];
        int n = in.readNBytes(bytes, 0, size);
        if (n != size) {
            throw new IOException("message ended after " + n + " of its " + size + " known bytes");
        }
        return bytes;
    }
}
