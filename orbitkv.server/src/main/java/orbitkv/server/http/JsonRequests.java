package orbitkv.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
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
final class JsonRequests {
    /** Keys per query/restore/evict request (DESIGN §9 candidates: 128 keys per lookup). */
    static final int KEYS_MAX = 128;
    /** Restore deadline bounds; the default applies when {@code deadline_ms} is absent. */
    static final long DEADLINE_MS_MAX = 600_000;
    static final long DEADLINE_MS_DEFAULT = 30_000;

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private JsonRequests() {}

    /** {@code {"namespace", "keys"}} of /cache/query. */
    record KeysRequest(Namespace namespace, List<StateKey> keys) {}

    /** {@code {"namespace", "keys", "deadline_ms"}} of /cache/restore. */
    record RestoreRequest(Namespace namespace, List<StateKey> keys, long deadlineMs) {}

    /** {@code {"namespace", "keys", "medium"}} of /cache/evict. */
    record EvictRequest(Namespace namespace, List<StateKey> keys, LocalTiers.EvictTarget target) {}

    /** {@code {"fence", "scope_digest", "timeout_ms"}} of /cache/metadata/await. */
    record AwaitRequest(InventoryFence fence, ScopeDigest scopeDigest, long timeoutMs) {}

    static KeysRequest query(byte[] body) {
        JsonNode root = object(body);
        Namespace ns = namespace(root);
        return new KeysRequest(ns, keys(root, ns));
    }

    static RestoreRequest restore(byte[] body) {
        JsonNode root = object(body);
        Namespace ns = namespace(root);
        List<StateKey> keys = keys(root, ns);
        long deadline = root.has("deadline_ms") ? integer(root, "deadline_ms", 1, DEADLINE_MS_MAX) : DEADLINE_MS_DEFAULT;
        return new RestoreRequest(ns, keys, deadline);
    }

    static EvictRequest evict(byte[] body) {
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

    static AwaitRequest await(byte[] body, long timeoutMsMax) {
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

    /** The {@code namespace} query parameter of /cache/save (already percent-decoded). */
    static Namespace namespaceParameter(List<String> values) {
        if (values == null || values.isEmpty()) {
            throw new ApiException(ApiError.MISSING_FIELD, "query parameter namespace is required");
        }
        if (values.size() > 1) {
            throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "query parameter namespace is given "
                    + values.size() + " times");
        }
        return namespaceOf(values.getFirst(), "query parameter namespace");
    }

    static Namespace namespaceOf(String text, String field) {
        int bytes = text.getBytes(StandardCharsets.UTF_8).length;
        if (bytes < 1 || bytes > Namespace.MAX_BYTES || !StandardCharsets.UTF_8.newEncoder().canEncode(text)) {
            throw new ApiException(ApiError.INVALID_NAMESPACE, field + " must be 1.." + Namespace.MAX_BYTES
                    + " bytes of UTF-8, got " + bytes + " bytes");
        }
        return Namespace.utf8(text);
    }

    /** Lowercase hex of 1..64 bytes. */
    static byte[] hexKey(String text, String field) {
        if (!isLowerHex(text) || text.isEmpty() || text.length() % 2 != 0 || text.length() > 2 * StateKey.MAX_KEY_BYTES) {
            throw new ApiException(ApiError.INVALID_KEY, field + " must be lowercase hex of 1.." + StateKey.MAX_KEY_BYTES
                    + " bytes, got \"" + clip(text) + "\"");
        }
        return HexFormat.of().parseHex(text);
    }

    private static JsonNode object(byte[] body) {
        JsonNode root;
        try {
            root = MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ApiException(ApiError.MALFORMED_JSON, "body is not valid JSON: " + clip(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new ApiException(ApiError.MALFORMED_JSON, "body cannot be read as JSON");
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
        JsonNode v = parent.get(field);
        if (v == null || v.isNull()) {
            throw new ApiException(ApiError.MISSING_FIELD, field + " is required");
        }
        return v;
    }

    private static String text(JsonNode parent, String field) {
        return text(parent, field, field);
    }

    private static String text(JsonNode parent, String field, String path) {
        JsonNode v = parent.get(field);
        if (v == null || v.isNull()) {
            throw new ApiException(ApiError.MISSING_FIELD, path + " is required");
        }
        if (!v.isTextual()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, path + " must be a string");
        }
        return v.textValue();
    }

    private static long integer(JsonNode parent, String field, long min, long max) {
        return integer(parent, field, field, min, max);
    }

    private static long integer(JsonNode parent, String field, String path, long min, long max) {
        JsonNode v = parent.get(field);
        if (v == null || v.isNull()) {
            throw new ApiException(ApiError.MISSING_FIELD, path + " is required");
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, path + " must be an integer");
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
    static String clip(String s) {
        return s == null ? "" : s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
