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

/**
 * One received message before or after parsing (SES-10): the encoded size is checked against the bound
 * before the message is parsed, so an oversized or unparseable frame is a named outcome, never an
 * allocation of its decoded form or a transport exception.
 */
sealed interface Inbound<T> {
    record Parsed<T>(T message, int encodedBytes) implements Inbound<T> {}

    record Oversized<T>(long encodedBytes, int boundBytes) implements Inbound<T> {}

    record Unparseable<T>(String detail) implements Inbound<T> {}

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
                    return new Parsed<>(parser.parseFrom(bytes), bytes.length);
                } catch (InvalidProtocolBufferException e) {
                    return new Unparseable<>(e.getMessage());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
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
