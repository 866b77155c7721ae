package orbitkv.inventory.session;

/**
 * The seeded bugs of the protocol simulator (issue 25 item 4): each is a one-line change of one check,
 * switched on for one {@link ProtocolSimulator} run by passing it to {@link ProtocolSimulator#run}. Nothing in
 * production code reads these: the switches live in the simulator's drive of the real classes (test sources),
 * each at the line named below, so a production build cannot turn one on. {@link #NONE} is the correct
 * protocol.
 */
enum SimBug {
    /** The correct protocol. */
    NONE("-"),
    /** Requester: skip the frame-number gap check (SES-3); lost and duplicated frames go unnoticed. */
    SKIP_GAP_CHECK("Requester.receive: frame == expected"),
    /** Source: accept an Open naming a stale incarnation of this node (SES-5) despite {@link OpenCheck}'s refusal. */
    ACCEPT_STALE_INCARNATION("Source.onOpen: OpenCheck STALE_SOURCE_INCARNATION refusal"),
    /** Requester: return credit for one frame more than it consumed (SES-13). */
    CREDIT_OFF_BY_ONE("Requester.apply: ACK(consumed)"),
    /** Requester: ACK a frame when it is received, before it is applied (SES-13: credit follows consumption). */
    ACK_BEFORE_APPLY("Requester.receive: ACK after apply"),
    /** Requester: skip the commit's transcript digest check (SES-11, SNAP-7). */
    SKIP_DIGEST_CHECK("Requester.commit: transcript digest equals"),
    /** Requester: install a staging view whose replay has not reached the marker's S1 (SNAP-5, SNAP-7). */
    COMMIT_BEFORE_S1("Requester.commit: replay cursor == S1"),
    /** Source: drop the final delete of a residence from a coalesced delta (PUB-7: a final delete is kept). */
    DROP_DELETE_IN_COALESCING("Source.pump: coalesced delta records"),
    /** Requester: act on a frame of a stream this requester already replaced (SES-6). */
    INSTALL_REPLACED_SESSION_FRAME("Requester.receive: frame's stream is the current stream");

    /** Where the switched line lives. */
    final String where;

    SimBug(String where) {
        this.where = where;
    }
}
