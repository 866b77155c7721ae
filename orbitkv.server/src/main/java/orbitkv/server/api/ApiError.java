package orbitkv.server.api;

/**
 * Every stable error code of the HTTP API v1 with its status (DESIGN §7). The wire form is
 * {@code {"error": {"code": name(), "message": str}}}; codes are a user-facing contract listed in
 * docs/api.md: never rename one, only add. A refused request changes no state.
 */
public enum ApiError {
    // 400: malformed request
    MALFORMED_HTTP(400),
    MALFORMED_JSON(400),
    MISSING_FIELD(400),
    INVALID_FIELD_TYPE(400),
    INVALID_NAMESPACE(400),
    INVALID_KEY(400),
    INVALID_MEDIUM(400),
    INVALID_FIELD_VALUE(400),
    INVALID_QUERY_PARAMETER(400),
    DUPLICATE_KEY(400),
    NO_RECORDS(400),
    TRUNCATED_RECORD(400),
    INVALID_KEY_LENGTH(400),
    UNEXPECTED_BODY(400),
    /** More than one Authorization header (issue 33): which one counts would depend on each proxy. */
    DUPLICATE_AUTHORIZATION(400),
    // 401: the bearer token of --http-token-file (or --http-read-token-file on reads) is missing or wrong
    UNAUTHORIZED(401),
    // 404 / 405
    UNKNOWN_PATH(404),
    METHOD_NOT_ALLOWED(405),
    // 408
    AWAIT_TIMEOUT(408),
    HEADER_TIMEOUT(408),
    BODY_TIMEOUT(408),
    // 409: fence conflicts
    CLUSTER_MISMATCH(409),
    OLD_INCARNATION(409),
    NOT_ADMITTED(409),
    SCOPE_DIGEST_MISMATCH(409),
    PROTOCOL_MISMATCH(409),
    /** issue 40 (IDX-6): POST /cache/scope while another scope generation is still bootstrapping. */
    SCOPE_CHANGE_PENDING(409),
    // 413: too large
    BODY_TOO_LARGE(413),
    TOO_MANY_RECORDS(413),
    TOO_MANY_KEYS(413),
    PAYLOAD_TOO_LARGE(413),
    BLOCK_EXCEEDS_TIER(413),
    // 415
    UNSUPPORTED_CONTENT_TYPE(415),
    // 429
    TOO_MANY_WAITERS(429),
    TOO_MANY_REQUESTS_IN_FLIGHT(429),
    TOO_MANY_PROBES_IN_FLIGHT(429),
    TOO_MANY_BODY_BYTES_IN_FLIGHT(429),
    /** One client address's share of the body bytes in flight is used up (issue 33). */
    TOO_MANY_CLIENT_BODY_BYTES_IN_FLIGHT(429),
    TOO_MANY_PIPELINED_REQUESTS(429),
    // 503
    METADATA_UNAVAILABLE(503),
    STANDALONE(503),
    MEMBERSHIP_EXPIRED(503),
    TIER_NO_EVICTABLE_SPACE(503),
    TIER_PINS_EXHAUSTED(503),
    SHUTTING_DOWN(503),
    /** issue 39: the /admission API with --admission-disabled. */
    ADMISSION_DISABLED(503),
    // issue 33: tier storage failures
    /** The filesystem under the DRAM arena (a tmpfs) could not back the save's bytes; nothing stored. */
    TIER_BACKING_STORE_FULL(503),
    /** /cache/sync: SSD copies of saves it covers failed to write (the blocks are in DRAM only). */
    SSD_WRITE_FAILED(503),
    // 500: a bug or an I/O failure of local storage, never an input problem
    INTERNAL(500);

    private final int status;

    ApiError(int status) {
        this.status = status;
    }

    public int status() {
        return status;
    }
}
