package orbitkv.server.incarnation;

import java.util.Objects;

/**
 * A refusal of the incarnation's metadata (query, sync, await, status), named by a {@link Reason}; it changes no
 * state. The HTTP adapter maps each reason to its stable API error code and status (docs/api.md); the metadata
 * itself knows nothing of HTTP (issue 34 item 2).
 */
public final class MetadataRefusal extends RuntimeException {
    /** Why the metadata refused; each has exactly one API error code of the same name. */
    public enum Reason {
        /** The index refuses a lookup beyond its key bound. */
        TOO_MANY_KEYS,
        CLUSTER_MISMATCH,
        SCOPE_DIGEST_MISMATCH,
        /** A field's value is well formed but impossible here (a fence sequence beyond the head). */
        INVALID_FIELD_VALUE,
        INVALID_QUERY_PARAMETER,
        OLD_INCARNATION,
        NOT_ADMITTED,
        AWAIT_TIMEOUT,
        /** Beyond {@code --await-waiters-max} (API-4, BND-1). */
        TOO_MANY_WAITERS,
        /** Membership suspended (watch gap, etcd unreachable). */
        METADATA_UNAVAILABLE,
        /** This incarnation is fenced (INV-7). */
        MEMBERSHIP_EXPIRED,
        /** A standalone Manager has no distributed metadata (INV-10). */
        STANDALONE,
        /** issue 40 (IDX-6): a scope change is already bootstrapping; one at a time. */
        SCOPE_CHANGE_PENDING
    }

    private final Reason reason;

    public MetadataRefusal(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
