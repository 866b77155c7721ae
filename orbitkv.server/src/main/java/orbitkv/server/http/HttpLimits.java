package orbitkv.server.http;

import java.util.Objects;
import java.util.Optional;
import orbitkv.server.config.BearerToken;
import orbitkv.server.config.ManagerConfig;

/**
 * The HTTP API's bounds (INV-9, BND-1), taken from the validated configuration ({@link #of}); tests change
 * single bounds with the {@code with...} methods.
 *
 * @param saveBodyBytesMax bound on a save body (also on a restore response body)
 * @param jsonBodyBytesMax bound on a JSON body
 * @param blockBytesMax bound on one payload
 * @param requestsInFlightMax request slots: requests admitted at once (receiving their body or executing)
 * @param awaitTimeoutMsMax cap of the await timeout
 * @param syncWaitMs bound on /cache/sync waiting for submitted saves
 * @param probesInFlightMax slots of /health and /metrics, apart from the request slots
 * @param bodyBytesInFlightMax body bytes admitted at once across all connections
 * @param pipelinedRequestsMax decoded requests waiting behind the executing one on one connection
 * @param timeouts the per-connection deadlines
 * @param token the bearer token of the mutating endpoints, if configured
 * @param readToken the bearer token of the reading endpoints ({@link ApiEndpoint.Access#READ}), if configured;
 *                  {@code token} is accepted for them as well (a writer may read)
 * @param bodyBytesInFlightPerClientMax body bytes admitted at once for one client address (issue 33)
 */
record HttpLimits(long saveBodyBytesMax, long jsonBodyBytesMax, long blockBytesMax, int requestsInFlightMax,
                  long awaitTimeoutMsMax, long syncWaitMs, int probesInFlightMax, long bodyBytesInFlightMax,
                  int pipelinedRequestsMax, Timeouts timeouts, Optional<BearerToken> token,
                  Optional<BearerToken> readToken, long bodyBytesInFlightPerClientMax) {
    HttpLimits {
        if (saveBodyBytesMax < 1 || jsonBodyBytesMax < 1 || blockBytesMax < 0 || requestsInFlightMax < 1
                || awaitTimeoutMsMax < 1 || syncWaitMs < 0 || probesInFlightMax < 1 || bodyBytesInFlightMax < 1
                || pipelinedRequestsMax < 1 || bodyBytesInFlightPerClientMax < 1) {
            throw new IllegalArgumentException("HTTP limits must be positive: " + saveBodyBytesMax + ", " + jsonBodyBytesMax
                    + ", " + blockBytesMax + ", " + requestsInFlightMax + ", " + awaitTimeoutMsMax + ", " + syncWaitMs
                    + ", " + probesInFlightMax + ", " + bodyBytesInFlightMax + ", " + pipelinedRequestsMax
                    + ", " + bodyBytesInFlightPerClientMax);
        }
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(readToken, "readToken");
    }

    /**
     * Per-connection deadlines (issue 20 item 5): the request line and headers within {@code headerMs} of
     * their first byte; a body delivering at least {@code bodyProgressBytesMin} bytes in every
     * {@code bodyProgressMs} window; an idle keep-alive connection closed after {@code idleMs}; after an early
     * refusal, unread bytes discarded for at most {@code lingerMs} and {@code lingerBytesMax}; an answer whose
     * pending bytes make no progress into the socket for {@code writeStallMs} closes its connection.
     */
    record Timeouts(long headerMs, long bodyProgressMs, long bodyProgressBytesMin, long idleMs, long lingerMs,
                    long lingerBytesMax, long writeStallMs) {
        Timeouts {
            if (headerMs < 1 || bodyProgressMs < 1 || bodyProgressBytesMin < 1 || idleMs < 1 || lingerMs < 0
                    || lingerBytesMax < 0 || writeStallMs < 1) {
                throw new IllegalArgumentException("HTTP timeouts must be positive: " + headerMs + ", " + bodyProgressMs
                        + ", " + bodyProgressBytesMin + ", " + idleMs + ", " + lingerMs + ", " + lingerBytesMax + ", "
                        + writeStallMs);
            }
        }
    }

    /** The HTTP limits of a validated configuration. */
    static HttpLimits of(ManagerConfig config) {
        ManagerConfig.Http h = config.http();
        return new HttpLimits(h.saveBodyBytesMax(), h.jsonBodyBytesMax(), config.tiers().blockBytesMax(),
                h.requestsInFlightMax(), h.awaitTimeoutMsMax(), h.awaitTimeoutMsMax(), h.probesInFlightMax(),
                h.bodyBytesInFlightMax(), h.pipelinedRequestsMax(),
                new Timeouts(h.headerTimeoutMs(), h.bodyProgressMs(), h.bodyProgressBytesMin(), h.idleTimeoutMs(),
                        h.lingerMs(), h.lingerBytesMax(), h.writeStallMs()),
                h.token(), h.readToken(), h.bodyBytesInFlightPerClientMax());
    }

    HttpLimits withBodies(long saveBodyMax, long jsonBodyMax, long blockMax) {
        return new HttpLimits(saveBodyMax, jsonBodyMax, blockMax, requestsInFlightMax, awaitTimeoutMsMax, syncWaitMs,
                probesInFlightMax, Math.max(bodyBytesInFlightMax, Math.max(saveBodyMax, jsonBodyMax)), pipelinedRequestsMax,
                timeouts, token, readToken, Math.max(bodyBytesInFlightPerClientMax, Math.max(saveBodyMax, jsonBodyMax)));
    }

    HttpLimits withSlots(int requests, int probes) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requests, awaitTimeoutMsMax, syncWaitMs,
                probes, bodyBytesInFlightMax, pipelinedRequestsMax, timeouts, token, readToken, bodyBytesInFlightPerClientMax);
    }

    HttpLimits withBodyBytesInFlightMax(long bytes) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requestsInFlightMax, awaitTimeoutMsMax,
                syncWaitMs, probesInFlightMax, bytes, pipelinedRequestsMax, timeouts, token, readToken, bodyBytesInFlightPerClientMax);
    }

    HttpLimits withPipelinedRequestsMax(int n) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requestsInFlightMax, awaitTimeoutMsMax,
                syncWaitMs, probesInFlightMax, bodyBytesInFlightMax, n, timeouts, token, readToken, bodyBytesInFlightPerClientMax);
    }

    HttpLimits withTimeouts(Timeouts t) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requestsInFlightMax, awaitTimeoutMsMax,
                syncWaitMs, probesInFlightMax, bodyBytesInFlightMax, pipelinedRequestsMax, t, token, readToken, bodyBytesInFlightPerClientMax);
    }

    HttpLimits withToken(BearerToken t) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requestsInFlightMax, awaitTimeoutMsMax,
                syncWaitMs, probesInFlightMax, bodyBytesInFlightMax, pipelinedRequestsMax, timeouts, Optional.of(t), readToken,
                bodyBytesInFlightPerClientMax);
    }

    HttpLimits withReadToken(BearerToken t) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requestsInFlightMax, awaitTimeoutMsMax,
                syncWaitMs, probesInFlightMax, bodyBytesInFlightMax, pipelinedRequestsMax, timeouts, token, Optional.of(t),
                bodyBytesInFlightPerClientMax);
    }

    HttpLimits withBodyBytesInFlightPerClientMax(long bytes) {
        return new HttpLimits(saveBodyBytesMax, jsonBodyBytesMax, blockBytesMax, requestsInFlightMax, awaitTimeoutMsMax,
                syncWaitMs, probesInFlightMax, bodyBytesInFlightMax, pipelinedRequestsMax, timeouts, token, readToken, bytes);
    }
}
