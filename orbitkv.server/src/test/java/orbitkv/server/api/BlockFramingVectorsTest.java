package orbitkv.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The block framing golden vectors, {@code docs/vectors/block-framing.json} (issue 35 item 6): the one file the
 * Manager's encoder and decoder and the Python client's tests ({@code clients/python/tests/test_framing.py}) both
 * read, so the two implementations cannot drift apart.
 */
@Tag("unit")
class BlockFramingVectorsTest {
    private static final HexFormat HEX = HexFormat.of();

    static Stream<Arguments> cases() throws Exception {
        Path file = Path.of(System.getProperty("user.dir")).resolve("../docs/vectors/block-framing.json").normalize();
        JsonNode root = new ObjectMapper().readTree(Files.readString(file));
        List<Arguments> out = new ArrayList<>();
        root.get("cases").forEach(c -> out.add(Arguments.of(c.get("name").asText(), c)));
        assertThat(out).hasSizeGreaterThan(10);
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void vector(String name, JsonNode c) {
        byte[] body = HEX.parseHex(c.get("body").asText());
        if (c.has("error")) {
            BlockFraming.Decoder d = new BlockFraming.Decoder(c.get("body_bytes_max").asLong(), c.get("block_bytes_max").asLong());
            assertThatThrownBy(() -> {
                d.feed(Unpooled.wrappedBuffer(body));
                d.finishBlocks();
            }).isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.error().name()).isEqualTo(c.get("error").asText()));
            return;
        }
        List<BlockFraming.Block> records = new ArrayList<>();
        c.get("records").forEach(r -> records.add(new BlockFraming.Block(HEX.parseHex(r.get("key").asText()),
                HEX.parseHex(r.get("payload").asText()))));
        ByteBuf encoded = Unpooled.buffer();
        BlockFraming.encode(encoded, records);
        byte[] bytes = new byte[encoded.readableBytes()];
        encoded.readBytes(bytes);
        assertThat(HEX.formatHex(bytes)).as("encoding").isEqualTo(c.get("body").asText());
        BlockFraming.Decoder d = new BlockFraming.Decoder(1 << 20, 1 << 20);
        // fed one byte at a time: the decoder is incremental
        for (byte b : body) {
            d.feed(Unpooled.wrappedBuffer(new byte[] {b}));
        }
        assertThat(d.finishBlocks()).as("decoding").containsExactlyElementsOf(records);
    }
}
