package orbitkv.server.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import orbitkv.server.incarnation.AwaitRequest;
import orbitkv.inventory.InventoryFence;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ScopeDigest;
import orbitkv.inventory.StateKey;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.server.tier.LocalTiers;

/**
 * Parses the JSON request bodies of DESIGN §7 through Jackson's tree model, so that every refusal names
 * the field and the bound with a stable {@link ApiError} code. Unknown fields are ignored; a field of the
 * wrong type is {@link ApiError#INVALID_FIELD_TYPE}; duplicate fields are malformed JSON.
 */
public final class JsonRequests {
    /** Keys per query/restore/evict request (DESIGN §9 candidates: 128 keys per lookup). */
    public static final int KEYS_MAX = 128;
    /** Restore deadline bounds; the default applies when {@code deadline_ms} is absent. */
    public static final long DEADLINE_MS_MAX = 600_000;
    public static final long DEADLINE_MS_DEFAULT = 30_000;

    /** Buffer recyclers kept per mapper, at most (beyond it a released one is dropped, as Jackson's bounded pool does). */
    static final int BUFFER_RECYCLERS_MAX = 64;

    private static final ObjectMapper MAPPER = newMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private JsonRequests() {}

    /**
     * A mapper whose parse and write buffers are recycled across threads. The HTTP handlers run on virtual threads,
     * where Jackson's default thread-local recycling never recycles: every request allocated its char[] and byte[]
     * buffers again (about 300 MB in 110 s on a restoring Manager, seen with JFR for issue 37).
     */
    public static ObjectMapper newMapper() {
        return new ObjectMapper(JsonFactory.builder()
                .recyclerPool(JsonRecyclerPools.newBoundedPool(BUFFER_RECYCLERS_MAX)).build());
    }

    /**
     * {@code {"namespace", "keys", "detail"}} of /cache/query; {@code prefixOnly} when {@code detail} is
     * {@code "prefix"} (the lean answer, issue 35 G5), false when it is {@code "full"} or absent.
     */
    public record KeysRequest(Namespace namespace, List<StateKey> keys, boolean prefixOnly) {}

    /** {@code {"namespace", "keys", "medium"}} of /cache/evict. */
    public record EvictRequest(Namespace namespace, List<StateKey> keys, LocalTiers.EvictTarget target) {}

    /** {@code {"fence", "scope_digest", "timeout_ms"}} of /cache/metadata/await. */

    public static KeysRequest query(byte[] body) {
        JsonNode root = object(body);
        Namespace ns = namespace(root);
        List<StateKey> keys = distinct(keys(root, ns));
        boolean prefixOnly = false;
        if (optional(root, "detail")) {
            String detail = text(root, "detail");
            prefixOnly = switch (detail) {
                case "full" -> false;
                case "prefix" -> true;
                default -> throw new ApiException(ApiError.INVALID_FIELD_VALUE,
                        "detail must be \"full\" or \"prefix\", got \"" + clip(detail) + "\"");
            };
        }
        return new KeysRequest(ns, keys, prefixOnly);
    }

    public static orbitkv.server.restore.RestoreRequest restore(byte[] body) {
        JsonNode root = object(body);
        Namespace ns = namespace(root);
        List<StateKey> keys = distinct(keys(root, ns));
        long deadline = optional(root, "deadline_ms") ? integer(root, "deadline_ms", 1, DEADLINE_MS_MAX) : DEADLINE_MS_DEFAULT;
        java.util.Optional<orbitkv.transfer.BackendPolicy> backend = java.util.Optional.empty();
        if (optional(root, "transfer_backend")) {
            String b = text(root, "transfer_backend");
            orbitkv.transfer.BackendPolicy p = orbitkv.server.config.ManagerConfig.backendPolicy(b);
            if (p == null) {
                throw new ApiException(ApiError.INVALID_FIELD_VALUE,
                        "transfer_backend must be \"shared-memory-preferred\" or \"tcp\", got \"" + clip(b) + "\"");
            }
            backend = java.util.Optional.of(p);
        }
        boolean stream = optional(root, "stream") && bool(root, "stream"); // issue 35 item 4: opt-in, additive
        boolean storeLocal = optional(root, "store_local") && bool(root, "store_local"); // issue 40: ROUTE-12
        return new orbitkv.server.restore.RestoreRequest(ns, keys, deadline, backend, stream, storeLocal);
    }

    /**
     * {@code POST /cache/prefetch} (issue 40, ROUTE-13): a declared demand, the keys in chain order (1..128, each once)
     * and an optional {@code deadline_ms} (1..600000, default 30000) after which a key not yet fetched is dropped.
     */
    public static orbitkv.server.restore.PrefetchRequest prefetch(byte[] body) {
        JsonNode root = object(body);
        Namespace ns = namespace(root);
        List<StateKey> keys = distinct(keys(root, ns));
        long deadline = optional(root, "deadline_ms") ? integer(root, "deadline_ms", 1, DEADLINE_MS_MAX) : DEADLINE_MS_DEFAULT;
        return new orbitkv.server.restore.PrefetchRequest(ns, keys, deadline);
    }

    /**
     * Query and restore name one prefix of an engine's chain, which never repeats a key: a repeated key is refused
     * (DUPLICATE_KEY, as /cache/save refuses a repeated record), naming both positions.
     */
    private static List<StateKey> distinct(List<StateKey> keys) {
        java.util.Map<StateKey, Integer> seen = new java.util.HashMap<>(keys.size() * 2);
        for (int i = 0; i < keys.size(); i++) {
            Integer first = seen.putIfAbsent(keys.get(i), i);
            if (first != null) {
                throw new ApiException(ApiError.DUPLICATE_KEY, "keys[" + i + "] repeats keys[" + first + "] ("
                        + keys.get(i).keyHex() + "): a prefix names each key once");
            }
        }
        return keys;
    }

    public static EvictRequest evict(byte[] body) {
        JsonNode root = object(body);
        Namespace ns = namespace(root);
        List<StateKey> keys = keys(root, ns);
        String medium = text(root, "medium");
        LocalTiers.EvictTarget target = switch (medium) {
            case "DRAM" -> LocalTiers.EvictTarget.DRAM;
            case "SSD" -> LocalTiers.EvictTarget.SSD;
            case "ALL" -> LocalTiers.EvictTarget.ALL;
            default -> throw new ApiException(ApiError.INVALID_MEDIUM,
                    "medium must be \"DRAM\", \"SSD\" or \"ALL\", got \"" + clip(medium) + "\"");
        };
        return new EvictRequest(ns, keys, target);
    }

    public static AwaitRequest await(byte[] body, long timeoutMsMax) {
        JsonNode root = object(body);
        JsonNode fence = required(root, "fence");
        if (!fence.isObject()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, "fence must be an object");
        }
        String protocol = text(fence, "protocol", "fence.protocol");
        if (!ClusterIdentity.PROTOCOL.equals(protocol)) {
            throw new ApiException(ApiError.PROTOCOL_MISMATCH, "fence.protocol must be \"" + ClusterIdentity.PROTOCOL
                    + "\", got \"" + clip(protocol) + "\"");
        }
        UUID cluster;
        try {
            cluster = UUID.fromString(text(fence, "cluster_uuid", "fence.cluster_uuid"));
        } catch (IllegalArgumentException e) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, "fence.cluster_uuid must be a UUID");
        }
        long epoch = integer(fence, "source_node_epoch", "fence.source_node_epoch", 1, Long.MAX_VALUE);
        Incarnation incarnation;
        try {
            incarnation = Incarnation.parse(text(fence, "source_incarnation", "fence.source_incarnation"));
        } catch (IllegalArgumentException e) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, "fence.source_incarnation must be 'node/epoch/uuid': "
                    + e.getMessage());
        }
        if (incarnation.epoch().value() != epoch) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, "fence.source_node_epoch " + epoch
                    + " differs from the epoch of fence.source_incarnation " + incarnation.epoch().value());
        }
        long sequence = integer(fence, "inventory_sequence", "fence.inventory_sequence", 0, Long.MAX_VALUE);
        String digestHex = text(root, "scope_digest");
        if (!isLowerHex(digestHex) || digestHex.length() != 2 * ScopeDigest.BYTES) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE,
                    "scope_digest must be " + 2 * ScopeDigest.BYTES + " lowercase hex characters");
        }
        long timeout = integer(root, "timeout_ms", 1, timeoutMsMax);
        return new AwaitRequest(new InventoryFence(protocol, cluster, incarnation, sequence),
                ScopeDigest.ofHex(digestHex), timeout);
    }

    /** issue 40 (IDX-6): {@code timeout_ms} of POST /cache/scope, 1..600000, default 60000. */
    public static final long SCOPE_TIMEOUT_MS_MAX = 600_000;
    public static final long SCOPE_TIMEOUT_MS_DEFAULT = 60_000;

    /** {@code {"namespaces": [..] | "all", "timeout_ms"}} of POST /cache/scope (IDX-6). */
    public record ScopeRequest(orbitkv.inventory.Scope scope, long timeoutMs) {}

    /**
     * POST /cache/scope (IDX-4, IDX-6, SES-8): {@code "all"}, or a list of at most 256 distinct namespaces encoding
     * to at most 64 KiB ({@code []} is the empty scope, never all); a refusal names the field and changes nothing.
     */
    public static ScopeRequest scope(byte[] body) {
        JsonNode root = object(body);
        JsonNode ns = required(root, "namespaces");
        orbitkv.inventory.Scope scope;
        if (ns.isTextual() && "all".equals(ns.textValue())) {
            scope = orbitkv.inventory.Scope.all();
        } else if (ns.isArray()) {
            if (ns.size() > orbitkv.inventory.Scope.MAX_NAMESPACES) {
                throw new ApiException(ApiError.INVALID_FIELD_VALUE, "namespaces lists " + ns.size()
                        + " namespaces; a scope holds at most " + orbitkv.inventory.Scope.MAX_NAMESPACES);
            }
            java.util.Map<Namespace, Integer> seen = new java.util.LinkedHashMap<>();
            for (int i = 0; i < ns.size(); i++) {
                if (!ns.get(i).isTextual()) {
                    throw new ApiException(ApiError.INVALID_FIELD_TYPE, "namespaces[" + i + "] must be a string");
                }
                Integer first = seen.putIfAbsent(namespaceOf(ns.get(i).textValue(), "namespaces[" + i + "]"), i);
                if (first != null) {
                    throw new ApiException(ApiError.INVALID_FIELD_VALUE, "namespaces[" + i + "] repeats namespaces[" + first + "]");
                }
            }
            scope = orbitkv.inventory.Scope.of(seen.keySet());
            int encoded = scope.canonicalEncoding().length;
            if (encoded > 64 * 1024) {
                throw new ApiException(ApiError.INVALID_FIELD_VALUE, "namespaces encode to " + encoded
                        + " bytes; a scope is at most 65536 bytes");
            }
        } else {
            throw new ApiException(ns.isTextual() ? ApiError.INVALID_FIELD_VALUE : ApiError.INVALID_FIELD_TYPE,
                    "namespaces must be a list of namespaces or the string \"all\"");
        }
        long timeout = optional(root, "timeout_ms") ? integer(root, "timeout_ms", 1, SCOPE_TIMEOUT_MS_MAX) : SCOPE_TIMEOUT_MS_DEFAULT;
        return new ScopeRequest(scope, timeout);
    }

    /**
     * The {@code namespace} query parameter of /cache/save: its percent-decoded bytes (null when absent), which
     * must be valid UTF-8 (the HTTP request target: never replaced with U+FFFD, so two byte strings never become
     * one namespace).
     */
    public static Namespace namespaceParameter(byte[] raw) {
        if (raw == null) {
            throw new ApiException(ApiError.MISSING_FIELD, "query parameter namespace is required");
        }
        return namespaceOf(utf8(raw, ApiError.INVALID_NAMESPACE, "query parameter namespace"),
                "query parameter namespace");
    }

    /** A namespace from text: well-formed Unicode (no lone surrogate) of 1..255 UTF-8 bytes. */
    public static Namespace namespaceOf(String text, String field) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1));
            if (paired) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new ApiException(ApiError.INVALID_NAMESPACE, field + " holds a lone surrogate \\u"
                        + Integer.toHexString(c) + " at character " + i + ": it is not Unicode text and has no UTF-8 form");
            }
        }
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes < 1 || bytes > Namespace.MAX_BYTES) {
            throw new ApiException(ApiError.INVALID_NAMESPACE, field + " must be 1.." + Namespace.MAX_BYTES
                    + " bytes of UTF-8, got " + bytes + " bytes");
        }
        return Namespace.utf8(text);
    }

    /** Lowercase hex of 1..64 bytes. */
    public static byte[] hexKey(String text, String field) {
        if (!isLowerHex(text) || text.isEmpty() || text.length() % 2 != 0 || text.length() > 2 * StateKey.MAX_KEY_BYTES) {
            throw new ApiException(ApiError.INVALID_KEY, field + " must be lowercase hex of 1.." + StateKey.MAX_KEY_BYTES
                    + " bytes, got \"" + clip(text) + "\"");
        }
        return HexFormat.of().parseHex(text);
    }

    /**
     * One JSON object in strict UTF-8 (RFC 8259): invalid UTF-8 is refused with its byte position (Jackson's
     * encoding detection would read UTF-16 or UTF-32 bodies), and nothing but whitespace may follow the
     * object (a second document, trailing bytes: {@code FAIL_ON_TRAILING_TOKENS}).
     */
    public static JsonNode object(byte[] body) {
        String text = utf8(body, ApiError.MALFORMED_JSON, "the body");
        JsonNode root;
        try {
            root = MAPPER.readTree(text);
        } catch (MismatchedInputException e) {
            throw new ApiException(ApiError.MALFORMED_JSON, e.getOriginalMessage() != null
                    && e.getOriginalMessage().startsWith("Trailing token")
                    ? "body holds data after its JSON value at line " + e.getLocation().getLineNr() + ", column "
                            + e.getLocation().getColumnNr() + ": one JSON object per request"
                    : "body is not valid JSON: " + clip(e.getOriginalMessage()));
        } catch (JsonProcessingException e) {
            throw new ApiException(ApiError.MALFORMED_JSON, "body is not valid JSON: " + clip(e.getOriginalMessage()));
        }
        if (root == null || root.isMissingNode()) {
            throw new ApiException(ApiError.MALFORMED_JSON, "body is empty; a JSON object is required");
        }
        if (!root.isObject()) {
            throw new ApiException(ApiError.MALFORMED_JSON, "body must be a JSON object");
        }
        return root;
    }

    private static Namespace namespace(JsonNode root) {
        return namespaceOf(text(root, "namespace"), "namespace");
    }

    private static List<StateKey> keys(JsonNode root, Namespace ns) {
        JsonNode keys = required(root, "keys");
        if (!keys.isArray()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, "keys must be an array of hex strings");
        }
        if (keys.size() > KEYS_MAX) {
            throw new ApiException(ApiError.TOO_MANY_KEYS, "keys holds " + keys.size() + " entries; at most " + KEYS_MAX);
        }
        if (keys.isEmpty()) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, "keys must hold 1.." + KEYS_MAX + " entries");
        }
        List<StateKey> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            JsonNode k = keys.get(i);
            if (!k.isTextual()) {
                throw new ApiException(ApiError.INVALID_FIELD_TYPE, "keys[" + i + "] must be a string");
            }
            out.add(new StateKey(ns, hexKey(k.textValue(), "keys[" + i + "]")));
        }
        return out;
    }

    private static JsonNode required(JsonNode parent, String field) {
        return present(parent, field, field);
    }

    /** A required field that is absent is MISSING_FIELD; one that is {@code null} says so. */
    private static JsonNode present(JsonNode parent, String field, String path) {
        JsonNode v = parent.get(field);
        if (v == null) {
            throw new ApiException(ApiError.MISSING_FIELD, path + " is required");
        }
        if (v.isNull()) {
            throw new ApiException(ApiError.MISSING_FIELD, path + " is required, got null");
        }
        return v;
    }

    /**
     * True if the optional {@code field} is given. Absent means "use the default"; an explicit {@code null}
     * is refused as the wrong type (it is neither absent nor a value), naming the field as optional.
     */
    private static boolean optional(JsonNode parent, String field) {
        JsonNode v = parent.get(field);
        if (v != null && v.isNull()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, field + " is optional but was null: omit it or give a value");
        }
        return v != null;
    }

    private static boolean bool(JsonNode parent, String field) {
        JsonNode v = present(parent, field, field);
        if (!v.isBoolean()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, field + " must be true or false");
        }
        return v.booleanValue();
    }

    private static String text(JsonNode parent, String field) {
        return text(parent, field, field);
    }

    private static String text(JsonNode parent, String field, String path) {
        JsonNode v = present(parent, field, path);
        if (!v.isTextual()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, path + " must be a string");
        }
        return v.textValue();
    }

    private static long integer(JsonNode parent, String field, long min, long max) {
        return integer(parent, field, field, min, max);
    }

    private static long integer(JsonNode parent, String field, String path, long min, long max) {
        JsonNode v = present(parent, field, path);
        if (!v.isIntegralNumber()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, path + " must be an integer");
        }
        if (!v.canConvertToLong()) { // an integer beyond 64 bits is a value out of range, not a wrong type (issue 33)
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, path + " must be " + min + ".." + max + ", got "
                    + clip(v.bigIntegerValue().toString()));
        }
        long value = v.longValue();
        if (value < min || value > max) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, path + " must be " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    private static boolean isLowerHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /** Echoed input is clipped so that an error message stays bounded. */
    public static String clip(String s) {
        return s == null ? "" : s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }

    /** Strict UTF-8; {@code code} and {@code what} name the refusal, which says where the bad bytes are. */
    public static String utf8(byte[] bytes, ApiError code, String what) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length); // UTF-8 never yields more chars than bytes
        CoderResult r = decoder.decode(in, out, true);
        if (!r.isError()) {
            r = decoder.flush(out);
        }
        if (r.isError()) {
            throw new ApiException(code, what + " is not valid UTF-8: an invalid sequence of " + r.length()
                    + " byte(s) at byte " + in.position() + " of " + bytes.length);
        }
        return out.flip().toString();
    }
}
