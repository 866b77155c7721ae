package orbitkv.conformance.peer;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import orbitkv.inventory.wire.InventorySessionGrpc;

/**
 * The v4 session method with raw bytes both ways, so a peer can send anything, including garbage, and a
 * benchmark can stream opaque frames over the same gRPC method (the raw baseline of issue 5).
 */
public final class RawBytes {
    private RawBytes() {}

    /** Bytes in, bytes out: no parsing. */
    public static final MethodDescriptor.Marshaller<byte[]> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream in) {
            try {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /** {@code orbitkv.inventory.v4.InventorySession/Session} carrying raw bytes. */
    public static final MethodDescriptor<byte[], byte[]> METHOD =
            InventorySessionGrpc.getSessionMethod().toBuilder(MARSHALLER, MARSHALLER).build();
}
