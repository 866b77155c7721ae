package orbitkv.transfer.frame;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The data channel framing (docs/transfer.md): fixed widths, round trips, and every malformed field named. */
@Tag("unit")
class DataFramesTest {
    @Test
    @DisplayName("a READ request is 40 bytes and round-trips")
    void requestRoundTrip() throws Exception {
        UUID id = UUID.randomUUID();
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeRequest(b, id, 127, Long.MAX_VALUE);
        assertThat(b.readableBytes()).isEqualTo(DataFrames.REQUEST_BYTES);
        assertThat(DataFrames.readRequest(b)).isEqualTo(new DataFrames.ReadRequest(id, 127, Long.MAX_VALUE));
    }

    @Test
    @DisplayName("issue 37 item 5: an AUTHORIZE header is 40 bytes with the body length (unsigned, read before the body) and the request id; nonzero grant or reserved bytes are malformed")
    void authorizeHeaderRoundTrip() throws Exception {
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeAuthorize(b, 1234, 77);
        assertThat(b.readableBytes()).isEqualTo(DataFrames.REQUEST_BYTES);
        assertThat(DataFrames.authorizeBodyBytes(b)).isEqualTo(1234);
        assertThat(DataFrames.readRequest(b.copy())).isEqualTo(new DataFrames.AuthorizeHeader(1234, 77));
        ByteBuf huge = b.copy();
        huge.setInt(DataFrames.AUTHORIZE_LENGTH_OFFSET, -1);
        assertThat(DataFrames.authorizeBodyBytes(huge)).as("unsigned: 2^32 - 1, never negative").isEqualTo(0xFFFF_FFFFL);
        ByteBuf read = Unpooled.buffer();
        DataFrames.writeRequest(read, UUID.randomUUID(), 1, 2);
        assertThat(DataFrames.authorizeBodyBytes(read)).as("not an AUTHORIZE").isEqualTo(-1);
        for (int at : new int[] {6, 8, 16, 28}) {
            ByteBuf bad = b.copy();
            bad.setByte(at, 1);
            assertThatThrownBy(() -> DataFrames.readRequest(bad)).as("byte %d", at)
                    .isInstanceOf(DataFrames.MalformedFrame.class);
        }
    }

    @Test
    @DisplayName("issue 33: a BIND request is 40 bytes (grant id and its 16-byte secret) and round-trips; a BIND with a nonzero reserved field is malformed")
    void bindRoundTrip() throws Exception {
        UUID id = UUID.randomUUID();
        byte[] secret = new byte[DataFrames.SECRET_BYTES];
        for (int i = 0; i < secret.length; i++) {
            secret[i] = (byte) (i * 17 + 3);
        }
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeBind(b, id, secret);
        assertThat(b.readableBytes()).isEqualTo(DataFrames.REQUEST_BYTES);
        DataFrames.Request r = DataFrames.readRequest(b.copy());
        assertThat(r).isInstanceOfSatisfying(DataFrames.BindRequest.class, bind -> {
            assertThat(bind.grantId()).isEqualTo(id);
            assertThat(bind.secret()).containsExactly(secret);
        });
        b.setShort(6, 1);
        assertThatThrownBy(() -> DataFrames.readRequest(b)).isInstanceOf(DataFrames.MalformedFrame.class);
    }

    @Test
    @DisplayName("a response header is 32 bytes and round-trips")
    void headerRoundTrip() throws Exception {
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeResponseHeader(b, DataStatus.OK, 9, 1 << 24, 0xCAFEBABE);
        assertThat(b.readableBytes()).isEqualTo(DataFrames.RESPONSE_HEADER_BYTES);
        byte[] h = new byte[32];
        b.readBytes(h);
        assertThat(DataFrames.readResponseHeader(h)).isEqualTo(new DataFrames.ResponseHeader(DataStatus.OK, 9, 1 << 24, 0xCAFEBABE));
    }

    static Stream<Arguments> badRequests() {
        return Stream.of(
                Arguments.of("magic", (Consumer<ByteBuf>) b -> b.setInt(0, 0x4F4B5655)),
                Arguments.of("version", (Consumer<ByteBuf>) b -> b.setByte(4, 2)),
                Arguments.of("type", (Consumer<ByteBuf>) b -> b.setByte(5, 3)),
                Arguments.of("reserved u16", (Consumer<ByteBuf>) b -> b.setShort(6, 1)),
                Arguments.of("block index >= 2^31", (Consumer<ByteBuf>) b -> b.setInt(24, 0x80000000)),
                Arguments.of("reserved u32", (Consumer<ByteBuf>) b -> b.setInt(28, 1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badRequests")
    @DisplayName("BND-1 a malformed READ request is named, never guessed at")
    void malformedRequest(String field, Consumer<ByteBuf> corrupt) {
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeRequest(b, UUID.randomUUID(), 1, 1);
        corrupt.accept(b);
        assertThatThrownBy(() -> DataFrames.readRequest(b)).isInstanceOf(DataFrames.MalformedFrame.class);
    }

    static Stream<Arguments> badHeaders() {
        return Stream.of(
                Arguments.of("magic", (Consumer<ByteBuf>) b -> b.setInt(0, 0)),
                Arguments.of("version", (Consumer<ByteBuf>) b -> b.setByte(4, 9)),
                Arguments.of("unknown status", (Consumer<ByteBuf>) b -> b.setByte(5, 77)),
                Arguments.of("length with a refusal", (Consumer<ByteBuf>) b -> b.setByte(5, DataStatus.EGRESS_LIMIT.code())),
                Arguments.of("negative length", (Consumer<ByteBuf>) b -> b.setLong(16, -1)),
                Arguments.of("reserved", (Consumer<ByteBuf>) b -> b.setInt(28, 5)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badHeaders")
    @DisplayName("a malformed response header is named")
    void malformedHeader(String field, Consumer<ByteBuf> corrupt) {
        ByteBuf b = Unpooled.buffer();
        DataFrames.writeResponseHeader(b, DataStatus.OK, 1, 100, 0);
        corrupt.accept(b);
        byte[] h = new byte[32];
        b.getBytes(0, h);
        assertThatThrownBy(() -> DataFrames.readResponseHeader(h)).isInstanceOf(DataFrames.MalformedFrame.class);
    }

    @Test
    @DisplayName("every status code maps back to itself and (but OK) to one DataRefusal")
    void statusCodes() {
        for (DataStatus s : DataStatus.values()) {
            assertThat(DataStatus.of(s.code())).isEqualTo(s);
            if (s != DataStatus.OK) {
                assertThat(DataStatus.of(s.refusal())).isEqualTo(s);
            }
        }
    }
}
