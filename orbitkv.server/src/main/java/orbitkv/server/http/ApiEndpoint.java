package orbitkv.server.http;

import io.netty.handler.codec.http.HttpMethod;

/**
 * The paths, methods and body kinds of HTTP API v1 (DESIGN §7), which endpoints need the bearer token when
 * one is configured ({@link Access#TOKEN}: the ones that change state or wait on it), which need the read token
 * when one is configured ({@link Access#READ}: the ones that reveal keys, bytes, owners or namespaces; issue 33),
 * and which are probes served from their own slots ({@link Access#PROBE}: a flood of slow requests never makes
 * them 429; they reveal counts only, never a key, so orchestrators probe them without a secret).
 */
enum ApiEndpoint {
    SAVE("/cache/save", HttpMethod.POST, Body.BLOCKS, "save", Access.TOKEN),
    QUERY("/cache/query", HttpMethod.POST, Body.JSON, "query", Access.READ),
    RESTORE("/cache/restore", HttpMethod.POST, Body.JSON, "restore", Access.READ),
    EVICT("/cache/evict", HttpMethod.POST, Body.JSON, "evict", Access.TOKEN),
    SYNC("/cache/sync", HttpMethod.POST, Body.EMPTY, "sync", Access.TOKEN),
    AWAIT("/cache/metadata/await", HttpMethod.POST, Body.JSON, "await", Access.TOKEN),
    STATUS("/cache/metadata/status", HttpMethod.GET, Body.EMPTY, "status", Access.READ),
    ROUTES("/cache/metadata/routes", HttpMethod.GET, Body.EMPTY, "routes", Access.READ),
    RESIDENCES("/cache/metadata/residences", HttpMethod.GET, Body.EMPTY, "residences", Access.READ),
    METRICS("/metrics", HttpMethod.GET, Body.EMPTY, "metrics", Access.PROBE),
    HEALTH("/health", HttpMethod.GET, Body.EMPTY, "health", Access.PROBE),
    /** The bounds a client must respect (issue 35, G2): open and served from the probe slots like /health. */
    LIMITS("/cache/limits", HttpMethod.GET, Body.EMPTY, "limits", Access.PROBE),
    // issue 39: the engine submitter API of the node-local admission window
    ADMISSION_REGISTER("/admission/register", HttpMethod.POST, Body.JSON, "admission_register", Access.TOKEN),
    ADMISSION_CHARGE("/admission/charge", HttpMethod.POST, Body.JSON, "admission_charge", Access.TOKEN),
    ADMISSION_RETURN("/admission/return", HttpMethod.POST, Body.JSON, "admission_return", Access.TOKEN),
    ADMISSION_TERMINATE("/admission/terminate", HttpMethod.POST, Body.JSON, "admission_terminate", Access.TOKEN),
    ADMISSION_LOST("/admission/lost", HttpMethod.POST, Body.JSON, "admission_lost", Access.TOKEN),
    // issue 40 (IDX-6): a change of the subscription scope while serving
    SCOPE("/cache/scope", HttpMethod.POST, Body.JSON, "scope", Access.TOKEN),
    // issue 40: declared-demand prefetch (ROUTE-13); speculative work on this Manager's budget: the write token
    PREFETCH("/cache/prefetch", HttpMethod.POST, Body.JSON, "prefetch", Access.TOKEN);

    /** Who may call an endpoint, and from which slots. */
    enum Access {
        /** Any client, from the request slots. */
        OPEN,
        /**
         * The read token when {@code --http-read-token-file} is set, or the write token (a writer may read), from
         * the request slots; open when no read token is configured.
         */
        READ,
        /** The bearer token when {@code --http-token-file} is set, from the request slots. */
        TOKEN,
        /** Any client, from the probe slots ({@code --http-probes-in-flight-max}). */
        PROBE
    }

    /** What a request body must be. */
    enum Body {
        /** {@code application/x-orbitkv-blocks}. */
        BLOCKS,
        /** {@code application/json} (UTF-8). */
        JSON,
        /** No body. */
        EMPTY
    }

    final String path;
    final HttpMethod method;
    final Body body;
    /** The bounded metrics label. */
    final String label;
    final Access access;

    ApiEndpoint(String path, HttpMethod method, Body body, String label, Access access) {
        this.path = path;
        this.method = method;
        this.body = body;
        this.label = label;
        this.access = access;
    }

    static ApiEndpoint byPath(String path) {
        for (ApiEndpoint e : values()) {
            if (e.path.equals(path)) {
                return e;
            }
        }
        return null;
    }
}
