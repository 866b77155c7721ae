package orbitkv.server.http;

import io.netty.handler.codec.http.HttpMethod;

/** The paths, methods and body kinds of HTTP API v1 (DESIGN §7). */
enum Endpoint {
    SAVE("/cache/save", HttpMethod.POST, Body.BLOCKS, "save"),
    QUERY("/cache/query", HttpMethod.POST, Body.JSON, "query"),
    RESTORE("/cache/restore", HttpMethod.POST, Body.JSON, "restore"),
    EVICT("/cache/evict", HttpMethod.POST, Body.JSON, "evict"),
    SYNC("/cache/sync", HttpMethod.POST, Body.EMPTY, "sync"),
    AWAIT("/cache/metadata/await", HttpMethod.POST, Body.JSON, "await"),
    STATUS("/cache/metadata/status", HttpMethod.GET, Body.EMPTY, "status"),
    METRICS("/metrics", HttpMethod.GET, Body.EMPTY, "metrics"),
    HEALTH("/health", HttpMethod.GET, Body.EMPTY, "health");

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

    Endpoint(String path, HttpMethod method, Body body, String label) {
        this.path = path;
        this.method = method;
        this.body = body;
        this.label = label;
    }

    static Endpoint byPath(String path) {
        for (Endpoint e : values()) {
            if (e.path.equals(path)) {
                return e;
            }
        }
        return null;
    }
}
