package orbitkv.server.http;

/**
 * The HTTP API's bounds (INV-9, BND-1), taken from the validated configuration.
 *
 * @param saveBodyBytesMax bound on a save body (also on a restore response body)
 * @param jsonBodyBytesMax bound on a JSON body
 * @param blockBytesMax bound on one payload
 * @param requestsInFlightMax requests admitted at once (bodies are buffered only for admitted requests)
 * @param awaitTimeoutMsMax cap of the await timeout
 * @param syncWaitMs bound on /cache/sync waiting for submitted saves
 */
record HttpLimits(long saveBodyBytesMax, long jsonBodyBytesMax, long blockBytesMax, int requestsInFlightMax,
                  long awaitTimeoutMsMax, long syncWaitMs) {
    HttpLimits {
        if (saveBodyBytesMax < 1 || jsonBodyBytesMax < 1 || blockBytesMax < 0 || requestsInFlightMax < 1
                || awaitTimeoutMsMax < 1 || syncWaitMs < 0) {
            throw new IllegalArgumentException("HTTP limits must be positive: " + saveBodyBytesMax + ", " + jsonBodyBytesMax
                    + ", " + blockBytesMax + ", " + requestsInFlightMax + ", " + awaitTimeoutMsMax + ", " + syncWaitMs);
        }
    }
}
