package orbitkv.server.http;

import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidencePage;
import orbitkv.inventory.ResidencePosition;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.JsonRequests;
import orbitkv.server.api.ResidenceCursor;

/**
 * The validated query of {@code GET /cache/metadata/residences?namespace=NS&limit=N&cursor=C}: every parameter is
 * checked here, before the inventory is read, and a bad one is a 400 naming it (no state changes).
 *
 * @param namespace list only this namespace, or every namespace
 * @param after continue strictly after this position (from {@code cursor}), or from the start
 * @param limit residences per page, 1..{@link ResidencePage#LIMIT_MAX}
 */
record ResidencesRequest(Optional<Namespace> namespace, Optional<ResidencePosition> after, int limit) {
    static final int LIMIT_DEFAULT = 100;

    ResidencesRequest {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(after, "after");
        if (limit < 1 || limit > ResidencePage.LIMIT_MAX) {
            throw new IllegalArgumentException("limit must be 1.." + ResidencePage.LIMIT_MAX + ", got " + limit);
        }
    }

    static ResidencesRequest parse(RequestTarget target) {
        byte[] rawNs = target.single("namespace");
        Optional<Namespace> ns = Optional.empty();
        if (rawNs != null) {
            ns = Optional.of(JsonRequests.namespaceOf(JsonRequests.utf8(rawNs, ApiError.INVALID_NAMESPACE,
                    "query parameter namespace"), "query parameter namespace"));
        }
        int limit = limit(target.text("limit"));
        String token = target.text("cursor");
        Optional<ResidencePosition> after = Optional.empty();
        if (token != null) {
            ResidencePosition p = ResidenceCursor.decode(token);
            if (ns.isPresent() && !Arrays.equals(p.key().namespace().bytes(), ns.get().bytes())) {
                throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "cursor belongs to another namespace than "
                        + "the namespace parameter: pass the next_cursor of a listing with the same namespace");
            }
            after = Optional.of(p);
        }
        return new ResidencesRequest(ns, after, limit);
    }

    private static int limit(String v) {
        if (v == null) {
            return LIMIT_DEFAULT;
        }
        if (!v.isEmpty() && v.length() <= 4 && v.chars().allMatch(c -> c >= '0' && c <= '9')) {
            int n = Integer.parseInt(v);
            if (n >= 1 && n <= ResidencePage.LIMIT_MAX) {
                return n;
            }
        }
        throw new ApiException(ApiError.INVALID_QUERY_PARAMETER, "limit must be an integer 1.." + ResidencePage.LIMIT_MAX
                + ", got " + JsonRequests.clip(v));
    }
}
