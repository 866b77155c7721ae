package orbitkv.transfer.frame;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.ReleaseStatus;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** BND-1: a received gRPC message is bounded by its encoded size before anything is parsed. */
@Tag("unit")
class BoundedMessageTest {
    private static final int BOUND = 64;
    private final MethodDescriptor.Marshaller<BoundedMessage<ReleaseResponse>> marshaller =
            BoundedMessage.marshaller(ReleaseResponse.parser(), BOUND);

    /** A stream that knows its length, as gRPC's are; it may announce more than it holds. */
    private static final class Known extends ByteArrayInputStream implements KnownLength {
        private final int announced;
        int read;

        Known(byte[] bytes, int announced) {
            super(bytes);
            this.announced = announced;
        }

        @Override
        public synchronized int available() {
            return announced - read;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) {
            int n = super.read(b, off, len);
            read += Math.max(0, n);
            return n;
        }
    }

    private static byte[] message(int detailChars) {
        return ReleaseResponse.newBuilder().setStatus(ReleaseStatus.RELEASED).setDetail("d".repeat(detailChars)).build()
                .toByteArray();
    }

    @Test
    @DisplayName("BND-1 rows: a known length within the bound parses; beyond it is oversized unread; short is unparseable")
    void knownLength() {
        byte[] ok = message(10);
        assertThat(marshaller.parse(new Known(ok, ok.length))).isInstanceOf(BoundedMessage.Parsed.class);
        byte[] big = message(BOUND);
        Known over = new Known(big, big.length);
        assertThat(marshaller.parse(over)).isEqualTo(new BoundedMessage.Oversized<ReleaseResponse>(big.length, BOUND));
        assertThat(over.read).as("nothing of an oversized message is read into an array").isZero();
        assertThat(marshaller.parse(new Known(ok, ok.length + 5)))
                .isEqualTo(new BoundedMessage.Unparseable<ReleaseResponse>("the message ended after " + ok.length
                        + " of its " + (ok.length + 5) + " bytes"));
    }

    @Test
    @DisplayName("BND-1 rows: an unknown length is read to the bound plus one; over it is oversized; garbage is unparseable")
    void unknownLength() {
        InputStream ok = new ByteArrayInputStream(message(10));
        assertThat(marshaller.parse(ok)).isInstanceOf(BoundedMessage.Parsed.class);
        byte[] big = message(BOUND);
        assertThat(marshaller.parse(new ByteArrayInputStream(big)))
                .isEqualTo(new BoundedMessage.Oversized<ReleaseResponse>(BOUND + 1, BOUND));
        assertThat(marshaller.parse(new ByteArrayInputStream(new byte[] {(byte) 0xff, (byte) 0xff})))
                .isInstanceOf(BoundedMessage.Unparseable.class);
    }
}
