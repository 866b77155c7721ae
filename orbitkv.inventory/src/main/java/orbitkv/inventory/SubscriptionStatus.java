package orbitkv.inventory;

import java.util.List;
import java.util.Objects;
import orbitkv.membership.Incarnation;

/**
 * The requester's sessions (DIAG-1, BND-3). Capacity is incomplete when admitted sources exceed
 * {@code sessionsPerRequesterMax}: those sources are listed, never silently skipped.
 *
 * @param admittedSources admitted serving members other than self (requester-only members are no sources, MEM-11)
 * @param sessions one entry per session this requester runs
 * @param beyondLimit admitted sources without a session because of the limit
 */
public record SubscriptionStatus(int admittedSources, List<PeerSession> sessions, List<Incarnation> beyondLimit) {
    public SubscriptionStatus {
        sessions = List.copyOf(Objects.requireNonNull(sessions, "sessions"));
        beyondLimit = List.copyOf(Objects.requireNonNull(beyondLimit, "beyondLimit"));
    }

    /** True iff some admitted source has no session because of the session limit (BND-3). */
    public boolean capacityIncomplete() {
        return !beyondLimit.isEmpty();
    }

    /**
     * One requester session.
     *
     * @param source the source incarnation
     * @param state connection state
     * @param connects streams opened so far
     * @param installs views installed so far
     * @param lastErrorCause the wire cause of the last close, or "" if none
     */
    public record PeerSession(Incarnation source, State state, long connects, long installs, String lastErrorCause) {}

    /** Requester session states. */
    public enum State {
        CONNECTING,
        BOOTSTRAPPING,
        STREAMING,
        BACKING_OFF,
        CLOSED
    }
}
