package orbitkv.conformance.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The kit's only view into the target besides the wire: HTTP API v1 (docs/api.md). It reads
 * {@code /cache/metadata/status} and {@code /metrics}, and writes blocks through {@code /cache/save} and
 * {@code /cache/evict} so the target's source has rows for the kit's sessions to bootstrap.
 */
final class TargetApi {
    static final String BLOCKS = "application/x-orbitkv-blocks";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

    private final URI base;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    TargetApi(URI base) {
        this.base = base;
    }

    URI base() {
        return base;
    }

    /** A 200 answer's JSON, or an {@link IllegalStateException} naming the endpoint, status and body. */
    JsonNode status() {
        return json(get("/cache/metadata/status?owners_limit=256"), "status");
    }

    /** The target's /metrics text. */
    String metrics() {
        Reply r = get("/metrics");
        if (r.status() != 200) {
            throw new IllegalStateException("GET /metrics answered " + r.status());
        }
        return r.text();
    }

    /**
     * One sample of a Prometheus text exposition: {@code name} with exactly the given labels (others ignored
     * if {@code labels} is empty and the family has none). Absent when the target exports no such sample.
     */
    static OptionalDouble sample(String metricsText, String name, Map<String, String> labels) {
        Pattern line = Pattern.compile("^" + Pattern.quote(name) + "(\\{[^}]*\\})?\\s+(\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(metricsText);
        while (m.find()) {
            String labelText = m.group(1) == null ? "" : m.group(1);
            boolean all = true;
            for (Map.Entry<String, String> e : labels.entrySet()) {
                if (!labelText.contains(e.getKey() + "=\"" + e.getValue() + "\"")) {
                    all = false;
                    break;
                }
            }
            if (all) {
                return OptionalDouble.of(Double.parseDouble(m.group(2)));
            }
        }
        return OptionalDouble.empty();
    }

    OptionalDouble sample(String name, Map<String, String> labels) {
        return sample(metrics(), name, labels);
    }

    /** Saves {@code blocks} (key hex → payload) into {@code namespace}; returns the answer's JSON. */
    JsonNode save(String namespace, Map<String, byte[]> blocks) {
        return json(post("/cache/save?namespace=" + java.net.URLEncoder.encode(namespace, StandardCharsets.UTF_8), BLOCKS,
                frame(blocks)), "save");
    }

    /** Evicts {@code keys} of {@code namespace} from every medium. */
    JsonNode evict(String namespace, List<String> keys) {
        return json(post("/cache/evict", "application/json", ("{\"namespace\": " + quote(namespace) + ", \"keys\": "
                + quoteAll(keys) + ", \"medium\": \"ALL\"}").getBytes(StandardCharsets.UTF_8)), "evict");
    }

    /** A query of {@code keys} in {@code namespace}. */
    JsonNode query(String namespace, List<String> keys) {
        return json(post("/cache/query", "application/json", ("{\"namespace\": " + quote(namespace) + ", \"keys\": "
                + quoteAll(keys) + "}").getBytes(StandardCharsets.UTF_8)), "query");
    }

    record Reply(int status, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    Reply get(String path) {
        return send(HttpRequest.newBuilder(base.resolve(path)).GET());
    }

    Reply post(String path, String contentType, byte[] body) {
        return send(HttpRequest.newBuilder(base.resolve(path)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    private Reply send(HttpRequest.Builder b) {
        try {
            HttpResponse<byte[]> r = client.send(b.timeout(CALL_TIMEOUT).build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Reply(r.statusCode(), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException("target HTTP API " + base + " unreachable: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static JsonNode json(Reply r, String what) {
        if (r.status() != 200) {
            throw new IllegalStateException(what + " answered " + r.status() + ": " + r.text());
        }
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new IllegalStateException(what + " answered no JSON: " + r.text(), e);
        }
    }

    /** A payload of {@code size >= 16} bytes: little-endian u64 generation and block index first (PERF-4). */
    static byte[] payload(long generation, long blockIndex, int size) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putLong(generation).putLong(blockIndex);
        while (b.hasRemaining()) {
            b.put((byte) (blockIndex + b.position()));
        }
        return b.array();
    }

    /** The block framing {@code u16 key_len | key | u32 payload_len | payload}, big-endian. */
    static byte[] frame(Map<String, byte[]> blocks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, byte[]> e : blocks.entrySet()) {
            byte[] k = HexFormat.of().parseHex(e.getKey());
            out.writeBytes(ByteBuffer.allocate(2 + k.length + 4).putShort((short) k.length).put(k).putInt(e.getValue().length).array());
            out.writeBytes(e.getValue());
        }
        return out.toByteArray();
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String quoteAll(List<String> keys) {
        StringBuilder b = new StringBuilder("[");
        for (String k : keys) {
            b.append(b.length() > 1 ? ", " : "").append(quote(k));
        }
        return b.append(']').toString();
    }
}
