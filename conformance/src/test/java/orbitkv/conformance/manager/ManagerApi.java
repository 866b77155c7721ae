package orbitkv.conformance.manager;

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
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A client of one Manager's HTTP API v1 as an engine or operator script would use it (DESIGN §7): JSON
 * bodies, the block framing {@code u16 key_len | key | u32 payload_len | payload} (big-endian), and the
 * 16-byte payload header of the measurement contract (little-endian u64 generation, u64 block index; PERF-4).
 */
public final class ManagerApi {
    public static final String BLOCKS = "application/x-orbitkv-blocks";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final String base;
    private final Duration timeout;

    public ManagerApi(String base) {
        this(base, Duration.ofSeconds(40));
    }

    /** A client whose every request gives up after {@code timeout} (the fault campaign: a stopped process). */
    public ManagerApi(String base, Duration timeout) {
        this.base = base;
        this.timeout = timeout;
    }

    /** A response: status, body bytes, headers. */
    public record Reply(int status, byte[] body, Map<String, List<String>> headers) {
        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException("not JSON (status " + status + "): " + text(), e);
            }
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        public String header(String name) {
            return headers.getOrDefault(name.toLowerCase(java.util.Locale.ROOT), List.of()).stream().findFirst().orElse(null);
        }
    }

    public Reply get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    public Reply post(String path, String contentType, byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return send(b);
    }

    public Reply postJson(String path, String json) {
        return post(path, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }

    private Reply send(HttpRequest.Builder b) {
        try {
            HttpResponse<byte[]> r = CLIENT.send(b.timeout(timeout).build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Reply(r.statusCode(), r.body(), r.headers().map());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ endpoints

    public Reply save(String namespace, Map<String, byte[]> blocks) {
        return post("/cache/save?namespace=" + namespace, BLOCKS, frame(blocks));
    }

    /**
     * The full query answer. Every 200 answer is cross-checked against the lean answer ({@code "detail": "prefix"},
     * issue 35 G5) of the same keys: equal coverage, view generation, recoverable prefix, stop, and one present flag per
     * key (a local or fresh replica listed), so every gate's query row checks the lean form too. A pair taken while
     * the Manager's state moved (different view generations, or a change between the two) is taken again, at most 5
     * times; a Manager that went away before the lean query leaves the check out.
     */
    public Reply query(String namespace, List<String> keys) {
        String body = "{\"namespace\": \"" + namespace + "\", \"keys\": " + jsonList(keys);
        Reply first = null;
        String mismatch = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            Reply full = postJson("/cache/query", body + "}");
            first = first == null ? full : first;
            if (full.status() != 200) {
                return first;
            }
            Reply lean;
            try {
                lean = postJson("/cache/query", body + ", \"detail\": \"prefix\"}");
            } catch (UncheckedIOException gone) {
                return first;
            }
            mismatch = leanMismatch(full.json(), lean);
            if (mismatch == null) {
                return first;
            }
        }
        throw new AssertionError("G5: the lean query answer differs from the full one in 5 consecutive pairs: " + mismatch);
    }

    /**
     * The full query answer without the lean cross-check: for samplers that query while a workload runs (the fault
     * campaign's {@code Checks}), where consecutive answers may legitimately differ and the extra queries would
     * only load the Managers.
     */
    public Reply queryFullOnly(String namespace, List<String> keys) {
        return postJson("/cache/query", "{\"namespace\": \"" + namespace + "\", \"keys\": " + jsonList(keys) + "}");
    }

    /** Null if {@code lean} agrees with {@code full}, else what differs. */
    private static String leanMismatch(JsonNode full, Reply leanReply) {
        if (leanReply.status() != 200) {
            return "lean answered " + leanReply.status() + ": " + leanReply.text();
        }
        JsonNode lean = leanReply.json();
        for (String f : List.of("coverage", "view_generation", "recoverable_prefix", "prefix_stop")) {
            if (!full.path(f).equals(lean.path(f))) {
                return f + " full=" + full.path(f) + " lean=" + lean.path(f);
            }
        }
        JsonNode candidates = full.get("candidates");
        JsonNode present = lean.get("present");
        if (present == null || present.size() != candidates.size()) {
            return "present " + present + " for " + candidates.size() + " keys";
        }
        for (int i = 0; i < candidates.size(); i++) {
            boolean any = false;
            for (JsonNode r : candidates.get(i).get("replicas")) {
                any |= !r.get("stale").asBoolean();
            }
            if (present.get(i).asBoolean() != any) {
                return "present[" + i + "]=" + present.get(i) + " but the full answer lists " + candidates.get(i).get("replicas");
            }
        }
        return null;
    }

    public Reply restore(String namespace, List<String> keys) {
        return postJson("/cache/restore", "{\"namespace\": \"" + namespace + "\", \"keys\": " + jsonList(keys)
                + ", \"deadline_ms\": 10000}");
    }

    /** A restore naming its READ backend for peer blocks ({@code tcp} or {@code shared-memory-preferred}). */
    public Reply restore(String namespace, List<String> keys, String transferBackend, long deadlineMs) {
        return postJson("/cache/restore", "{\"namespace\": \"" + namespace + "\", \"keys\": " + jsonList(keys)
                + ", \"deadline_ms\": " + deadlineMs + ", \"transfer_backend\": \"" + transferBackend + "\"}");
    }

    public Reply evict(String namespace, List<String> keys, String medium) {
        return postJson("/cache/evict", "{\"namespace\": \"" + namespace + "\", \"keys\": " + jsonList(keys)
                + ", \"medium\": \"" + medium + "\"}");
    }

    public Reply sync() {
        return post("/cache/sync", null, null);
    }

    public Reply await(JsonNode fence, String scopeDigest, long timeoutMs) {
        return postJson("/cache/metadata/await", "{\"fence\": " + fence + ", \"scope_digest\": \"" + scopeDigest
                + "\", \"timeout_ms\": " + timeoutMs + "}");
    }

    /** The status endpoint every caller reads (owners paginated at 256). */
    public static final String STATUS_PATH = "/cache/metadata/status?owners_limit=256";

    public JsonNode status() {
        Reply r = get(STATUS_PATH);
        if (r.status() != 200) {
            throw new AssertionError("status answered " + r.status() + ": " + r.text());
        }
        return r.json();
    }

    public JsonNode health() {
        return get("/health").json();
    }

    // ------------------------------------------------------------------ payloads and framing

    /** A payload of {@code size >= 16} bytes: LE u64 generation, LE u64 block index, then a known pattern (PERF-4). */
    public static byte[] payload(long generation, long blockIndex, int size) {
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN).putLong(generation).putLong(blockIndex);
        for (int i = 16; i < size; i++) {
            b.put((byte) (generation * 31 + blockIndex * 7 + i));
        }
        return b.array();
    }

    /** The 16-byte header of a payload: {generation, block index}. */
    public static long[] header(byte[] payload) {
        ByteBuffer b = ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
        return new long[] {b.getLong(), b.getLong()};
    }

    public static byte[] frame(Map<String, byte[]> blocks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, byte[]> e : blocks.entrySet()) {
            byte[] k = HexFormat.of().parseHex(e.getKey());
            ByteBuffer h = ByteBuffer.allocate(2 + k.length + 4).putShort((short) k.length).put(k).putInt(e.getValue().length);
            out.writeBytes(h.array());
            out.writeBytes(e.getValue());
        }
        return out.toByteArray();
    }

    /** Decodes a restore body: key hex → payload, in body order. */
    public static Map<String, byte[]> unframe(byte[] body) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        ByteBuffer b = ByteBuffer.wrap(body);
        while (b.hasRemaining()) {
            byte[] k = new byte[Short.toUnsignedInt(b.getShort())];
            b.get(k);
            byte[] p = new byte[b.getInt()];
            b.get(p);
            out.put(HexFormat.of().formatHex(k), p);
        }
        return out;
    }

    private static String jsonList(List<String> keys) {
        List<String> quoted = new ArrayList<>(keys.size());
        for (String k : keys) {
            quoted.add("\"" + k + "\"");
        }
        return "[" + String.join(", ", quoted) + "]";
    }
}
