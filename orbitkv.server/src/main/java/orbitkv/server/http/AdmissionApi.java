package orbitkv.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.server.api.AdmissionAnswer;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.JsonRequests;

/**
 * The engine submitter API of the node-local admission window (issue 39, DESIGN S6; ROUTE-11): an engine registers,
 * charges its P/D WRITE bytes to a NIC lane before it sends them and returns them with evidence, so the window the
 * Manager's READs see is node-wide. A refusal is an answer ({@code "outcome": "refused"} with the refusal's name);
 * malformed input is a 400 and changes nothing; with {@code --admission-disabled} every call is 503
 * ADMISSION_DISABLED.
 */
final class AdmissionApi {
    /** Bound on {@code wait_ms} and {@code deadline_ms}. */
    static final long WAIT_MS_MAX = 60_000;

    private AdmissionApi() {}

    static ApiResponse call(ApiEndpoint endpoint, Optional<NodeAdmissionService> admission, byte[] body)
            throws InterruptedException {
        NodeAdmissionService a = admission.orElseThrow(() -> new ApiException(ApiError.ADMISSION_DISABLED,
                "the node-local admission window is off (--admission-disabled)"));
        JsonNode root = JsonRequests.object(body);
        long now = System.nanoTime();
        try {
            AdmissionOutcome o = switch (endpoint) {
                case ADMISSION_REGISTER -> a.register(SubmitterKind.parse(text(root, "kind")), text(root, "instance"));
                case ADMISSION_CHARGE -> charge(a, root, now);
                case ADMISSION_RETURN -> a.returnBytes(number(root, "submitter", 1, Long.MAX_VALUE),
                        number(root, "lease", 1, Long.MAX_VALUE), number(root, "bytes", 1, Long.MAX_VALUE),
                        ReturnEvidence.parse(text(root, "evidence")));
                case ADMISSION_TERMINATE -> {
                    long returned = a.terminated(number(root, "submitter", 1, Long.MAX_VALUE));
                    yield new AdmissionOutcome.Returned(0, returned, 0);
                }
                case ADMISSION_LOST -> {
                    a.lost(number(root, "submitter", 1, Long.MAX_VALUE));
                    yield new AdmissionOutcome.Returned(0, 0, 0);
                }
                default -> throw new IllegalArgumentException("not an admission endpoint: " + endpoint);
            };
            return CacheApi.json(200, AdmissionAnswer.of(o, System.nanoTime()));
        } catch (IllegalArgumentException e) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, e.getMessage());
        }
    }

    /** {@code {submitter, nic, direction, bytes, deadline_ms, remaining_bytes?, wait_ms?}}. */
    private static AdmissionOutcome charge(NodeAdmissionService a, JsonNode root, long now) throws InterruptedException {
        long bytes = number(root, "bytes", 1, Long.MAX_VALUE);
        long deadlineMs = number(root, "deadline_ms", 1, WAIT_MS_MAX);
        long waitMs = root.has("wait_ms") ? number(root, "wait_ms", 0, WAIT_MS_MAX) : 0;
        long remaining = root.has("remaining_bytes") ? number(root, "remaining_bytes", bytes, Long.MAX_VALUE) : bytes;
        NicLane lane = new NicLane(text(root, "nic"), NicLane.Direction.parse(text(root, "direction")));
        NodeAdmission.LeaseRequest req = new NodeAdmission.LeaseRequest(bytes, now + deadlineMs * 1_000_000L,
                remaining, waitMs > 0);
        return a.charge(number(root, "submitter", 1, Long.MAX_VALUE), lane, req, Math.min(waitMs, deadlineMs));
    }

    private static String text(JsonNode root, String field) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            throw new ApiException(ApiError.MISSING_FIELD, field + " is required");
        }
        if (!n.isTextual()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, field + " must be a string");
        }
        return n.textValue();
    }

    private static long number(JsonNode root, String field, long min, long max) {
        JsonNode n = root.get(field);
        if (n == null || n.isNull()) {
            throw new ApiException(ApiError.MISSING_FIELD, field + " is required");
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw new ApiException(ApiError.INVALID_FIELD_TYPE, field + " must be an integer");
        }
        long v = n.longValue();
        if (v < min || v > max) {
            throw new ApiException(ApiError.INVALID_FIELD_VALUE, field + " must be " + min + ".." + max + ", got " + v);
        }
        return v;
    }
}
