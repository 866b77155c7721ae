package orbitkv.server.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import orbitkv.server.api.BlockFraming;

/**
 * The demo's client of one Manager's HTTP API v1 (docs/api.md), as an engine would use it. The block framing
 * is the server's own {@link BlockFraming} (one implementation inside this module).
 *
 * <p>Why the conformance suite's {@code ManagerApi} stays a separate client (issue 18 item 5): the suite checks
 * implementations of the HTTP contract, this one and others, so its client must be written from docs/api.md
 * alone; sharing this module's encoder would let one framing bug pass on both sides. And a shared home would
 * need the server, a launcher that exports nothing, to export a package. Their logic is small and each is
 * pinned by tests on its own side (DemoGateTest runs this client against real Managers).
 */
final class DemoClient {
    static final String BLOCKS = BlockFraming.CONTENT_TYPE;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** One answer. */
    record Reply(int status, byte[] body, java.net.http.HttpHeaders headers) {
        Reply(int status, byte[] body) {
            this(status, body, java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true));
        }

        /** The first value of header {@code name}, or "" when absent. */
        String header(String name) {
            return headers.firstValue(name).orElse("");
        }

        JsonNode json() throws IOException {
            return JSON.readTree(body);
        }

        /** The error code of a refusal, or "" for a 2xx. */
        String code() throws IOException {
            return status / 100 == 2 ? "" : json().at("/error/code").asText();
        }
    }

    private final String base;

    DemoClient(String httpHostPort) {
        this.base = "http://" + httpHostPort;
    }

    Reply post(String path, String contentType, byte[] body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(40))
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        HttpResponse<byte[]> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new Reply(r.statusCode(), r.body(), r.headers());
    }

    Reply postJson(String path, Object body) throws IOException, InterruptedException {
        return post(path, "application/json", JSON.writeValueAsBytes(body));
    }

    JsonNode get(String path) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
        return JSON.readTree(r.body());
    }

    Reply save(String namespace, Map<String, byte[]> blocks) throws IOException, InterruptedException {
        return post("/cache/save?namespace=" + namespace, BLOCKS, frame(blocks));
    }

    Reply query(String namespace, List<String> keys) throws IOException, InterruptedException {
        return postJson("/cache/query", Map.of("namespace", namespace, "keys", keys));
    }

    Reply restore(String namespace, List<String> keys) throws IOException, InterruptedException {
        return postJson("/cache/restore", Map.of("namespace", namespace, "keys", keys, "deadline_ms", 10_000));
    }

    /** A restore naming its READ backend ({@code tcp} or {@code shared-memory-preferred}) for peer blocks. */
    Reply restore(String namespace, List<String> keys, String transferBackend) throws IOException, InterruptedException {
        return postJson("/cache/restore", Map.of("namespace", namespace, "keys", keys, "deadline_ms", 10_000,
                "transfer_backend", transferBackend));
    }

    Reply evict(String namespace, List<String> keys, String medium) throws IOException, InterruptedException {
        return postJson("/cache/evict", Map.of("namespace", namespace, "keys", keys, "medium", medium));
    }

    Reply sync() throws IOException, InterruptedException {
        return post("/cache/sync", null, null);
    }

    Reply await(JsonNode fence, String scopeDigest, long timeoutMs) throws IOException, InterruptedException {
        return postJson("/cache/metadata/await", Map.of("fence", fence, "scope_digest", scopeDigest, "timeout_ms", timeoutMs));
    }

    JsonNode status() throws IOException, InterruptedException {
        return get("/cache/metadata/status?owners_limit=256");
    }

    /** The owner row of {@code incarnation}, walking the paginated owner status (DIAG-1); null if absent. */
    JsonNode ownerStatus(String incarnation) throws IOException, InterruptedException {
        String token = null;
        for (int page = 0; page < 1024; page++) { // bounded walk: at most 1024 pages of 64 owners
            JsonNode s = get("/cache/metadata/status?owners_limit=64"
                    + (token == null ? "" : "&owners_page_token=" + java.net.URLEncoder.encode(token, java.nio.charset.StandardCharsets.UTF_8)));
            for (JsonNode o : s.get("owners")) {
                if (o.at("/owner/incarnation").asText().equals(incarnation)) {
                    return o;
                }
            }
            JsonNode next = s.get("next_page_token");
            if (next == null || next.isNull()) {
                return null;
            }
            token = next.asText();
        }
        throw new IllegalStateException("owner status has more than 1024 pages");
    }

    /** PERF-4: little-endian u64 generation, u64 block index, then a pattern derived from both. */
    static byte[] payload(long generation, long blockIndex, int size) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putLong(generation).putLong(blockIndex);
        for (int i = 16; i < size; i++) {
            b.put((byte) (generation * 31 + blockIndex * 7 + i));
        }
        return b.array();
    }

    static byte[] frame(Map<String, byte[]> blocks) {
        List<BlockFraming.Block> records = new ArrayList<>(blocks.size());
        blocks.forEach((key, payload) -> records.add(new BlockFraming.Block(HexFormat.of().parseHex(key), payload)));
        ByteBuf buf = Unpooled.buffer();
        try {
            BlockFraming.encode(buf, records);
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    /** A restore body, decoded with the server's own bounds-checked decoder: key hex to payload, in body order. */
    static Map<String, byte[]> unframe(byte[] body) {
        BlockFraming.Decoder decoder = new BlockFraming.Decoder(Math.max(1, body.length), Math.max(0, body.length));
        decoder.feed(Unpooled.wrappedBuffer(body));
        Map<String, byte[]> out = new LinkedHashMap<>();
        for (BlockFraming.Block b : body.length == 0 ? List.<BlockFraming.Block>of() : decoder.finishBlocks()) {
            out.put(HexFormat.of().formatHex(b.key()), b.payload());
        }
        return out;
    }
}
