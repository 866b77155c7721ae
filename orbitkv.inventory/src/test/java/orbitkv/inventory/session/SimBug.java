package orbitkv.inventory.session;

/**
 * The seeded bugs of the protocol simulator (issue 25 item 4, issue 38 item 4): each is a one-line change of one
 * check, switched on for one {@link ProtocolSimulator} run by passing it to {@link ProtocolSimulator#run}. The four
 * requester bugs switch a check of the production {@link RequesterCore} off through its package-private
 * {@link RequesterCore.Fault} hook, which only the simulator sets (no Manager option reaches it). The others live
 * where the simulator still models the code: the source's pump and Open handling (the source core is not yet
 * extracted) and the receiver's commit check (the GlobalIndex of {@code orbitkv.index}, which this module's tests
 * can not depend on). {@link #NONE} is the correct protocol.
 */
enum SimBug {
    /** The correct protocol. */
    NONE("-", null),
    /** Requester: skip the frame-number gap check (SES-12); lost and duplicated frames go unnoticed. */
    SKIP_GAP_CHECK("RequesterCore.received: n == lastFrame + 1", RequesterCore.Fault.SKIP_GAP_CHECK),
    /** Source: accept an Open naming a stale incarnation of this node (SES-5) despite {@link OpenCheck}'s refusal. */
    ACCEPT_STALE_INCARNATION("model Source.onOpen: OpenCheck STALE_SOURCE_INCARNATION refusal", null),
    /** Requester: return credit for one frame more than it consumed (SES-13). */
    CREDIT_OFF_BY_ONE("RequesterCore.ack: consumed_through_frame", RequesterCore.Fault.CREDIT_OFF_BY_ONE),
    /** Requester: ACK a frame when it is received, before it is applied (SES-13: credit follows consumption). */
    ACK_BEFORE_APPLY("RequesterCore.received: ACK after apply", RequesterCore.Fault.ACK_BEFORE_APPLY),
    /** Requester's receiver: skip the commit's transcript digest check (SES-11, SNAP-7). */
    SKIP_DIGEST_CHECK("model SimReceiver.commit: transcript digest equals", null),
    /** Requester's receiver: install a staging view whose replay has not reached the marker's S1 (SNAP-5, SNAP-7). */
    COMMIT_BEFORE_S1("model SimReceiver.commit: replay cursor == S1", null),
    /** Source: drop the final delete of a residence from a coalesced delta (PUB-7: a final delete is kept). */
    DROP_DELETE_IN_COALESCING("model Source.pump: coalesced delta records", null),
    /** Requester: act on a frame of a stream this requester already replaced (SES-6). */
    INSTALL_REPLACED_SESSION_FRAME("RequesterCore.onFrame: the frame's stream is the current stream",
            RequesterCore.Fault.INSTALL_REPLACED_SESSION_FRAME);

    /** Where the switched line lives. */
    final String where;
    /** The production core's hook this bug sets, or null when the bug lives in the simulator's model. */
    final RequesterCore.Fault fault;

    SimBug(String where, RequesterCore.Fault fault) {
        this.where = where;
        this.fault = fault;
    }
}
