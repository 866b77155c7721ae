package orbitkv.conformance.kit;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;

/**
 * The target's state as the session scenarios read it (issue 34 item 6): for a Manager, API v1
 * ({@code /cache/metadata/status}, {@code /cache/query}, {@code /metrics}; {@link HttpTargetStatus}); in-process,
 * the objects themselves. Every call reads afresh: scenarios poll it.
 */
interface TargetStatus {
    /** The target's current incarnation ({@code status.self.incarnation}). */
    Incarnation incarnation();

    /** The target source's journal head ({@code status.inventory.head_sequence}). */
    long headSequence();

    /** The revision of the target's membership view ({@code status.membership.revision}). */
    long membershipRevision();

    /** Whether the target's membership view is valid ({@code status.membership.valid}). */
    boolean membershipValid();

    /** The target's lease state: {@code healthy}, {@code fenced}, ... ({@code status.membership.lease}). */
    String lease();

    /** Whether the target heals itself after a fence ({@code status.membership.heal.enabled}). */
    boolean healEnabled();

    /** The sessions the target's source serves ({@code status.sessions.served[]}). */
    List<ServedSession> served();

    /** The view of {@code owner} the target's requester has installed ({@code status.owners[]}), if any. */
    Optional<InstalledView> installed(Incarnation owner);

    /** The replicas of {@code owner} the target lists for {@code keys}: "key hex/medium" → "sequence/size". */
    Map<String, String> replicas(Incarnation owner, Namespace ns, List<StateKey> keys);

    /** One counter sample ({@code /metrics} family with these labels); empty when the target exports none. */
    OptionalDouble counter(String family, Map<String, String> labels);

    /**
     * One served session.
     *
     * @param sessionId the session id as text
     * @param requester the requester, as text that names its node id
     * @param phase the session phase ({@code CLOSED} once ended)
     * @param cursor the session cursor
     * @param outstandingBytes the credit-consuming bytes not yet acknowledged (SES-13)
     */
    record ServedSession(String sessionId, String requester, String phase, long cursor, long outstandingBytes) {}

    /**
     * An installed view of one owner.
     *
     * @param viewId the view id as text
     * @param watermark the installed watermark
     */
    record InstalledView(String viewId, long watermark) {}
}
