package orbitkv.conformance.peer;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import orbitkv.inventory.wire.InventorySessionGrpc;

/** The v4 session method with raw bytes both ways, so the peer can send anything, including garbage. */
final class RawBytes {
    private RawBytes() {}

    static final MethodDescriptor.Marshaller<byte[]> MARSHALLER = new MethodDescriptor.Marshaller<>() {
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

    static final MethodDescriptor<byte[], byte[]> METHOD =
            InventorySessionGrpc.getSessionMethod().toBuilder(MARSHALLER, MARSHALLER).build();
}
