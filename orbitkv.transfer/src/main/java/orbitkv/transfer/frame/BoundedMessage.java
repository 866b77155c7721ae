package orbitkv.transfer.frame;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * One received message, bounded by its encoded size before it is parsed (BND-1): an oversized or
 * unparseable message becomes a named outcome (and a named refusal), never a decoded allocation and never a
 * transport error. gRPC's own {@code maxInboundMessageSize} (the listener's) bounds what is buffered at all.
 */
public sealed interface BoundedMessage<T> {
    record Parsed<T>(T message) implements BoundedMessage<T> {}

    record Oversized<T>(long encodedBytes, int boundBytes) implements BoundedMessage<T> {}

    record Unparseable<T>(String detail) implements BoundedMessage<T> {}

    /** A marshaller that checks the encoded size against {@code boundBytes}, then parses with {@code parser}. */
    static <T extends MessageLite> MethodDescriptor.Marshaller<BoundedMessage<T>> marshaller(Parser<T> parser,
            int boundBytes) {
        return new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(BoundedMessage<T> value) {
                if (value instanceof Parsed<T> p) {
                    return new ByteArrayInputStream(((MessageLite) p.message()).toByteArray());
                }
                throw new IllegalStateException("only parsed messages are sent");
            }

            @Override
            public BoundedMessage<T> parse(InputStream in) {
                try {
                    long size = in instanceof KnownLength ? in.available() : -1;
                    if (size > boundBytes) {
                        in.skip(size);
                        return new Oversized<>(size, boundBytes);
                    }
                    byte[] bytes;
                    if (size >= 0) {
                        // gRPC's streams know their length: one array of exactly that size (readNBytes(bound + 1)
                        // grows its own chunks of 8-16 KiB and copies them, per message: garbage on every call)
                        bytes = new byte[(int) size];
                        int n = in.readNBytes(bytes, 0, bytes.length);
                        if (n != bytes.length) {
                            return new Unparseable<>("the message ended after " + n + " of its " + size + " bytes");
                        }
                    } else {
                        bytes = in.readNBytes(boundBytes + 1);
                        if (bytes.length > boundBytes) {
                            return new Oversized<>(bytes.length, boundBytes);
                        }
                    }
                    return new Parsed<>(parser.parseFrom(bytes));
                } catch (InvalidProtocolBufferException e) {
                    return new Unparseable<>(String.valueOf(e.getMessage()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }
}
