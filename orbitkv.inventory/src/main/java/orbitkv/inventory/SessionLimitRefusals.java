package orbitkv.inventory;

import java.util.List;
import java.util.Objects;
import orbitkv.membership.Incarnation;

/**
 * Current members whose Open this source refused with {@code SESSION_LIMIT} and that it has not served since
 * (issue 33, BND-3: a member beyond the limit is never skipped silently). A member's episode starts at its
 * first refusal (logged once) and ends when a session of it is admitted or it leaves the membership view.
 *
 * @param members the members in an open episode, oldest first, at most {@link #MEMBERS_MAX}
 * @param episodes episodes started since the server started (each logged once): a counter
 * @param untracked first refusals not listed because {@link #MEMBERS_MAX} members were already listed (counted,
 *     still logged within the log rate limit)
 */
public record SessionLimitRefusals(List<Incarnation> members, long episodes, long untracked) {
    /** Bound of the listed members. */
    public static final int MEMBERS_MAX = 1024;
    public static final SessionLimitRefusals NONE = new SessionLimitRefusals(List.of(), 0, 0);

    public SessionLimitRefusals {
        members = List.copyOf(Objects.requireNonNull(members, "members"));
        if (members.size() > MEMBERS_MAX || episodes < 0 || untracked < 0) {
            throw new IllegalArgumentException("session limit refusals out of bounds");
        }
    }
}
