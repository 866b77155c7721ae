package orbitkv.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionStatus;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.ReturnEvidence;
import orbitkv.recovery.SubmitterKind;
import orbitkv.server.admission.NodeAdmissionService;

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

    /** The answer of one admission call: exactly the fields that apply. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Answer(String outcome, Long submitter, Long lease, Long bytes, String lane, Long expiresInMs,
                  Long outstanding, Long returnedBytes, String refusal, String detail) {
        static Answer of(AdmissionOutcome o, long now) {
            return switch (o) {
                case AdmissionOutcome.Registered r -> new Answer("registered", r.submitter(), null, null, null, null,
                        null, null, null, null);
                case AdmissionOutcome.Granted g -> new Answer("granted", null, g.lease(), g.bytes(), g.lane().toString(),
                        Math.max(0, (g.expiresAtNanos() - now) / 1_000_000), null, null, null, null);
                case AdmissionOutcome.Returned r -> new Answer("returned", null, r.lease(), r.bytes(), null, null,
                        r.outstanding(), null, null, null);
                case AdmissionOutcome.Refused r -> new Answer("refused", null, null, null, null, null, null, null,
                        r.reason().wireName(), r.detail());
                case AdmissionOutcome.Queued q -> throw new IllegalStateException("a queued answer is never returned");
            };
        }
    }

    /** The {@code admission} part of /cache/metadata/status (null when disabled). */
    record StatusView(List<LaneView> lanes, Map<String, Long> chargedBytesByKind, Map<String, Long> refusals,
                      int submitters, int lostSubmitters, int leases, int pending, long expiredLeases,
                      String managerReadLane) {
        static StatusView of(NodeAdmissionService s) {
            AdmissionStatus st = s.status();
            Map<String, Long> kinds = new TreeMap<>();
            st.chargedByKind().forEach((k, v) -> kinds.put(k.wireName(), v));
            Map<String, Long> refusals = new TreeMap<>();
            st.refusals().forEach((k, v) -> refusals.put(k.wireName(), v));
            return new StatusView(st.lanes().stream().map(LaneView::of).toList(), kinds, refusals, st.submitters(),
                    st.lostSubmitters(), st.leases(), st.pending(), st.expiredLeases(),
                    s.managerReadLane().map(NicLane::toString).orElse(null));
        }
    }

    /** One lane in the status. */
    record LaneView(String nic, String direction, long windowBytesMax, long usableBytes, long chargedBytes,
                    long quarantinedBytes, long peakBytes, long paceBytesPerSecond, int pending, long grantedBytesTotal) {
        static LaneView of(AdmissionStatus.LaneStatus l) {
            return new LaneView(l.lane().nic(), l.lane().direction().wireName(), l.windowBytesMax(), l.usableBytes(),
                    l.chargedBytes(), l.quarantinedBytes(), l.peakBytes(), l.usablePaceBytesPerSecond(), l.pending(),
                    l.grantedBytesTotal());
        }
    }

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
            return CacheApi.json(200, Answer.of(o, System.nanoTime()));
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
