package orbitkv.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import orbitkv.testing.SeededTries;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Tag("unit")
class BlockFramingTest {
    private static final long BODY_MAX = 1 << 20;
    private static final long PAYLOAD_MAX = 4096;

    record Body(List<BlockFraming.Block> blocks, long chunkSeed) {}

    /** 1..128 records with unique keys: a repeated key is refused (DUPLICATE_KEY) before its payload. */
    static Body body(SeededTries.Gen g) {
        List<BlockFraming.Block> drawn = g.list(1, 128, x -> new BlockFraming.Block(x.bytes(1, 64), x.bytes(0, 600)));
        java.util.Set<String> keys = new java.util.HashSet<>();
        List<BlockFraming.Block> unique = drawn.stream().filter(b -> keys.add(HexFormat.of().formatHex(b.key()))).toList();
        return new Body(unique, g.anyLong());
    }

    @org.junit.jupiter.api.Test
    @DisplayName("BND-1 encode then decode in arbitrary chunks returns the same records in order (200 seeded tries)")
    void roundTrip() {
        SeededTries.run("roundTrip", 200, 11L, BlockFramingTest::body, b -> roundTrip(b.blocks(), b.chunkSeed()));
    }

    private static void roundTrip(List<BlockFraming.Block> blocks, long chunkSeed) {
        ByteBuf body = Unpooled.buffer();
        BlockFraming.encode(body, blocks);
        BlockFraming.Decoder decoder = new BlockFraming.Decoder(BODY_MAX, PAYLOAD_MAX);
        Random random = new Random(chunkSeed);
        while (body.isReadable()) {
            int n = Math.min(body.readableBytes(), 1 + random.nextInt(97));
            decoder.feed(body.readSlice(n));
        }
        assertThat(decoder.finishBlocks()).containsExactlyElementsOf(blocks);
    }

    /** Bodies in hex and the exact refusal; each is also fed one byte at a time. */
    @ParameterizedTest(name = "{0}")
    @DisplayName("BND-1 malformed bodies get a specific error code before buffering")
    @CsvSource(delimiter = '|', textBlock = """
            empty body                    |                                        | NO_RECORDS         | body holds no records
            zero key length               | 0000                                   | INVALID_KEY_LENGTH | record 0: key_len must be 1..64, got 0
            key length 65                 | 0041                                   | INVALID_KEY_LENGTH | record 0: key_len must be 1..64, got 65
            truncated key length          | 00                                     | TRUNCATED_RECORD   | body ends inside record 0 (key length) after 1 bytes
            truncated key                 | 0002aa                                 | TRUNCATED_RECORD   | body ends inside record 0 (key) after 3 bytes
            truncated payload length      | 0001aa0000                             | TRUNCATED_RECORD   | body ends inside record 0 (payload length) after 5 bytes
            truncated payload             | 0001aa00000003bbbb                     | TRUNCATED_RECORD   | body ends inside record 0 (payload) after 9 bytes
            payload over the bound        | 0001aa00001001                         | PAYLOAD_TOO_LARGE  | record 0: payload_len 4097 exceeds 4096 bytes
            payload length 2^32-1         | 0001aaffffffff                         | PAYLOAD_TOO_LARGE  | record 0: payload_len 4294967295 exceeds 4096 bytes
            trailing garbage              | 0001aa00000001bb07                     | TRUNCATED_RECORD   | body ends inside record 1 (key length) after 9 bytes
            trailing zero key record      | 0001aa00000001bb0000                   | INVALID_KEY_LENGTH | record 1: key_len must be 1..64, got 0
            duplicate key                 | 0001aa00000001bb0001aa                 | DUPLICATE_KEY      | record 1 repeats key aa
            """)
    void malformed(String name, String hex, ApiError code, String message) {
        byte[] bytes = hex == null ? new byte[0] : HexFormat.of().parseHex(hex);
        for (int chunk : new int[] {Math.max(1, bytes.length), 1}) {
            BlockFraming.Decoder decoder = new BlockFraming.Decoder(BODY_MAX, PAYLOAD_MAX);
            assertThatThrownBy(() -> {
                for (int i = 0; i < bytes.length; i += chunk) {
                    decoder.feed(Unpooled.wrappedBuffer(bytes, i, Math.min(chunk, bytes.length - i)));
                }
                decoder.finish();
            }).isInstanceOfSatisfying(ApiException.class, e -> {
                assertThat(e.error()).isEqualTo(code);
                assertThat(e.getMessage()).isEqualTo(message);
            });
        }
    }

    @org.junit.jupiter.api.Test
    @DisplayName("BND-1 the 129th record is refused when its header arrives, before its payload is buffered")
    void recordCountBound() {
        List<BlockFraming.Block> blocks = new ArrayList<>();
        for (int i = 0; i < 129; i++) {
            blocks.add(new BlockFraming.Block(new byte[] {(byte) i}, new byte[] {1}));
        }
        ByteBuf body = Unpooled.buffer();
        BlockFraming.encode(body, blocks);
        BlockFraming.Decoder decoder = new BlockFraming.Decoder(BODY_MAX, PAYLOAD_MAX);
        assertThatThrownBy(() -> decoder.feed(body)).isInstanceOfSatisfying(ApiException.class,
                e -> assertThat(e.error()).isEqualTo(ApiError.TOO_MANY_RECORDS));
    }

    @org.junit.jupiter.api.Test
    @DisplayName("BND-1 a payload length that would overrun the body bound is refused before allocation")
    void bodyBound() {
        BlockFraming.Decoder decoder = new BlockFraming.Decoder(100, 4096);
        ByteBuf header = Unpooled.wrappedBuffer(HexFormat.of().parseHex("0001aa00000100"));
        assertThatThrownBy(() -> decoder.feed(header)).isInstanceOfSatisfying(ApiException.class, e -> {
            assertThat(e.error()).isEqualTo(ApiError.BODY_TOO_LARGE);
            assertThat(e.getMessage()).isEqualTo("record 0: payload_len 256 would exceed the body bound of 100 bytes");
        });
        BlockFraming.Decoder chunks = new BlockFraming.Decoder(10, 4096);
        chunks.feed(Unpooled.wrappedBuffer(new byte[] {0, 1, 1}));
        assertThatThrownBy(() -> chunks.feed(Unpooled.wrappedBuffer(new byte[8])))
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.error()).isEqualTo(ApiError.BODY_TOO_LARGE));
    }
}
