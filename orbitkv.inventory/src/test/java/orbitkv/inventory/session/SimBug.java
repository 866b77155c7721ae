package orbitkv.inventory.session;

/**
 * The seeded bugs of the protocol simulator (issue 25 item 4, issue 38 item 4): each is a one-line change of one
 * check, switched on for one {@link ProtocolSimulator} run by passing it to {@link ProtocolSimulator#run}. Seven switch a
 * check of a production session core off through its package-private hook ({@link RequesterCore.Fault},
 * {@link SourceCore.Fault}), which only the simulator sets (no Manager option or public type reaches it). The two
 * receiver bugs live in the simulator's {@code SimReceiver}: the commit checks they switch off are the GlobalIndex's
 * in {@code orbitkv.index}, which depends on this module, so this module's tests can not run it (a reactor cycle).
 * {@link #NONE} is the correct protocol.
 */
enum SimBug {
    /** The correct protocol. */
    NONE("-", (RequesterCore.Fault) null),
    /** Requester: skip the frame-number gap check (SES-12); lost and duplicated frames go unnoticed. */
    SKIP_GAP_CHECK("RequesterCore.received: n == lastFrame + 1", RequesterCore.Fault.SKIP_GAP_CHECK),
    /** Source: accept an Open naming a stale incarnation of this node (SES-5) despite {@link OpenCheck}'s refusal. */
    ACCEPT_STALE_INCARNATION("SourceCore.onOpen: OpenCheck STALE_SOURCE_INCARNATION refusal", SourceCore.Fault.ACCEPT_STALE_INCARNATION),
    /** Requester: return credit for one frame more than it consumed (SES-13). */
    CREDIT_OFF_BY_ONE("RequesterCore.ack: consumed_through_frame", RequesterCore.Fault.CREDIT_OFF_BY_ONE),
    /** Requester: ACK a frame when it is received, before it is applied (SES-13: credit follows consumption). */
    ACK_BEFORE_APPLY("RequesterCore.received: ACK after apply", RequesterCore.Fault.ACK_BEFORE_APPLY),
    /** Requester's receiver: skip the commit's transcript digest check (SES-11, SNAP-7). */
    SKIP_DIGEST_CHECK("model SimReceiver.commit: transcript digest equals", (RequesterCore.Fault) null),
    /** Requester's receiver: install a staging view whose replay has not reached the marker's S1 (SNAP-5, SNAP-7). */
    COMMIT_BEFORE_S1("model SimReceiver.commit: replay cursor == S1", (RequesterCore.Fault) null),
    /** Source: drop the final delete of a residence from a coalesced delta (PUB-7: a final delete is kept). */
    DROP_DELETE_IN_COALESCING("SourcePump.queueDelta: coalesced delta records", SourceCore.Fault.DROP_DELETE_IN_COALESCING),
    /**
     * Source: a session at BARRIER priority with several deltas read sends only the last, its interval stretched back
     * to the cursor, so the watermark jumps past the omitted changes (ROUTE-10: priority never does that).
     */
    PRIORITY_SKIPS_OMITTED("SourcePump.streamStep: every read delta in order", SourceCore.Fault.PRIORITY_SKIPS_OMITTED),
    /** Requester: act on a frame of a stream this requester already replaced (SES-6). */
    INSTALL_REPLACED_SESSION_FRAME("RequesterCore.onFrame: the frame's stream is the current stream",
            RequesterCore.Fault.INSTALL_REPLACED_SESSION_FRAME);

    /** Where the switched line lives. */
    final String where;
    /** The production requester core's hook this bug sets, or null. */
    final RequesterCore.Fault fault;
    /** The production source core's hook this bug sets, or null. */
    final SourceCore.Fault sourceFault;

    SimBug(String where, RequesterCore.Fault fault) {
        this.where = where;
        this.fault = fault;
        this.sourceFault = null;
    }

    SimBug(String where, SourceCore.Fault sourceFault) {
        this.where = where;
        this.fault = null;
        this.sourceFault = sourceFault;
    }
}
