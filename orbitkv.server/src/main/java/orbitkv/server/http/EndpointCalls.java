package orbitkv.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import orbitkv.server.incarnation.MetadataRefusal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.JsonRequests;

/**
 * The endpoint groups of HTTP API v1: which {@link CacheApi} method answers each {@link ApiEndpoint}, and the query
 * parameters of the paginated diagnostics (status owners, route traces), each bounded and refused with
 * {@code INVALID_QUERY_PARAMETER} outside its range.
 */
final class EndpointCalls {
    static final int OWNERS_LIMIT_DEFAULT = 100;
    static final int OWNERS_LIMIT_MAX = 1000;
    /** Route traces per page of {@code /cache/metadata/routes} (the planner's own bound). */
    static final int TRACES_LIMIT_MAX = 1024;

    private static final Logger LOG = LoggerFactory.getLogger(EndpointCalls.class);

    private EndpointCalls() {}

    /**
     * The answer to an admitted, fully received request: the endpoint's, or its refusal (an {@link ApiException}, a
     * {@link MetadataRefusal} mapped by {@link ApiException#of}), 503 when interrupted by shutdown, 500 for anything
     * else; each error counted. The request's body buffer is freed and an uncommitted save aborted either way.
     */
    static ApiResponse answer(CacheApi api, HttpLimits limits, ApiMetrics metrics, InFlightRequest r,
                              ByteBufAllocator alloc) {
        try {
            return call(api, limits, r.endpoint, r.target, r.bytes, r.save, alloc);
        } catch (ApiException e) {
            metrics.error(e.error());
            return CacheApi.error(e);
        } catch (MetadataRefusal e) {
            ApiException refusal = ApiException.of(e);
            metrics.error(refusal.error());
            return CacheApi.error(refusal);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            metrics.error(ApiError.SHUTTING_DOWN);
            return CacheApi.error(new ApiException(ApiError.SHUTTING_DOWN, "interrupted by shutdown"));
        } catch (RuntimeException | Error e) {
            LOG.error("{} failed", r.endpoint.path, e);
            metrics.error(ApiError.INTERNAL);
            return CacheApi.error(new ApiException(ApiError.INTERNAL, "internal error: " + e.getClass().getSimpleName()));
        } finally {
            if (r.bytes != null) {
                r.bytes.release();
            }
            r.abortSave(); // a no-op after the save committed
        }
    }

    /** Calls the endpoint's logic with the request's body and query parameters. */
    static ApiResponse call(CacheApi api, HttpLimits limits, ApiEndpoint endpoint, RequestTarget target, ByteBuf body,
                            CacheApi.SaveStream save, ByteBufAllocator alloc) throws InterruptedException {
        return switch (endpoint) {
            case SAVE -> api.save(save);
            case QUERY -> api.query(ByteBufUtil.getBytes(body));
            case RESTORE -> api.restore(ByteBufUtil.getBytes(body), alloc);
            case EVICT -> api.evict(ByteBufUtil.getBytes(body));
            case SYNC -> api.sync();
            case AWAIT -> api.await(ByteBufUtil.getBytes(body), limits.awaitTimeoutMsMax());
            case STATUS -> api.status(ownersLimit(target), target.text("owners_page_token"));
            case ROUTES -> api.routeTraces(tracesLimit(target), beforeId(target));
            case RESIDENCES -> api.residences(ResidencesRequest.parse(target));
            case METRICS -> api.metrics();
            case HEALTH -> api.health();
            case LIMITS -> api.limits(limits);
            case ADMISSION_REGISTER, ADMISSION_CHARGE, ADMISSION_RETURN, ADMISSION_TERMINATE, ADMISSION_LOST ->
                    api.admission(endpoint, ByteBufUtil.getBytes(body)); // issue 39
            case SCOPE -> api.changeScope(ByteBufUtil.getBytes(body)); // issue 40
            case PREFETCH -> api.prefetch(ByteBufUtil.getBytes(body)); // issue 40
        };
    }

    private static int ownersLimit(RequestTarget target) {
        String v = target.text("owners_limit");
        if (v == null) {
            return OWNERS_LIMIT_DEFAULT;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= OWNERS_LIMIT_MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the refusal
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "owners_limit must be an integer 1.." + OWNERS_LIMIT_MAX
                + ", got " + JsonRequests.clip(v));
    }

    /** {@code limit} of the route traces page: 1..1024, default 100. */
    private static int tracesLimit(RequestTarget target) {
        String v = target.text("limit");
        if (v == null) {
            return OWNERS_LIMIT_DEFAULT;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= TRACES_LIMIT_MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the refusal
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "limit must be an integer 1.." + TRACES_LIMIT_MAX
                + ", got " + JsonRequests.clip(v));
    }

    /** {@code before_id} of the route traces page: a trace id from {@code next_before_id}, or absent. */
    private static java.util.OptionalLong beforeId(RequestTarget target) {
        String v = target.text("before_id");
        if (v == null) {
            return java.util.OptionalLong.empty();
        }
        try {
            long id = Long.parseLong(v);
            if (id >= 0) {
                return java.util.OptionalLong.of(id);
            }
        } catch (NumberFormatException e) {
            // fall through to the refusal
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "before_id must be a trace id (an integer >= 0), got "
                + JsonRequests.clip(v));
    }
}
