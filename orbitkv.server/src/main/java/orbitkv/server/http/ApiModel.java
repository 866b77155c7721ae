package orbitkv.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The JSON response bodies of HTTP API v1 (DESIGN §7), serialized by Jackson with snake_case names.
 * Field names are a user-facing contract (docs/api.md): additions only.
 */
final class ApiModel {
    private ApiModel() {}

    /** {@code {"node_id", "node_epoch", "incarnation"}}. */
    record Owner(String nodeId, long nodeEpoch, String incarnation) {}

    record SavedBlock(String key, String medium, long sequence, long size) {}

    /** A record of the save body that was not stored because of tier state (not of the request). */
    record RefusedBlock(String key, String code, String message) {}

    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    record SaveResponse(String namespace, List<SavedBlock> saved, long headSequence, List<RefusedBlock> refused) {}

    record Replica(Owner owner, String medium, long sequence, long size, boolean local, boolean stale) {}

    record Candidate(String key, List<Replica> replicas, boolean truncated) {}

    record QueryResponse(String coverage, long viewGeneration, int recoverablePrefix, String prefixStop,
                         List<Candidate> candidates) {}

    /** One retained restore route trace (ROUTE-3): its header form plus the fields a dashboard filters on. */
    record RouteTraceView(long id, String trace, int demandKeys, int restoredKeys, String stop, int plannedPrefixKeys,
                          String plannedStop, String selectionMode, String decision, List<String> replans,
                          long readyNanos, int drainPending, Long loadAgeNs) {}

    /** {@code GET /cache/metadata/routes}: newest first; {@code next_before_id} pages to older ones. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record RouteTracesResponse(List<RouteTraceView> traces, String nextBeforeId) {}

    record EvictResponse(long evicted, long headSequence) {}

    /** One residence of {@code GET /cache/metadata/residences}: block identity, tier, residency sequence, size. */
    record ResidenceView(String namespace, String key, String medium, long sequence, long size) {}

    /** {@code GET /cache/metadata/residences}: one page in resident-map order; {@code next_cursor} null on the last. */
    record ResidencesResponse(long headSequence, String namespace, List<ResidenceView> residences, String nextCursor) {}

    record Fence(String protocol, String clusterUuid, long sourceNodeEpoch, String sourceIncarnation,
                 long inventorySequence) {}

    record SyncFenceResponse(Fence inventoryFence) {}

    record SyncStandaloneResponse(boolean standalone) {}

    record AwaitResponse(long appliedSequence, String viewId) {}

    record Cluster(String name, String uuid) {}

    /** {@code namespaces} is a list of strings or the string "all". */
    record ScopeView(String digest, long generation, Object namespaces) {}

    /**
     * {@code lease}: "healthy", "renewal-failing" (etcd unreachable or slow: degraded, still admitted until the
     * fence) or "fenced" ("standalone" without etcd); {@code refused_records}: member records never admitted
     * (issue 20 items 6, 7).
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record MembershipStatus(Long revision, boolean valid, int members, String lease, long failedRenewals,
                            RefusedRecords refusedRecords, @JsonInclude(JsonInclude.Include.NON_NULL) HealReport heal) {
        MembershipStatus(Long revision, boolean valid, int members, String lease, long failedRenewals,
                         RefusedRecords refusedRecords) {
            this(revision, valid, members, lease, failedRenewals, refusedRecords, null);
        }

        MembershipStatus withHeal(HealReport h) {
            return new MembershipStatus(revision, valid, members, lease, failedRenewals, refusedRecords, h);
        }
    }

    record RefusedRecords(long unleased, long keyMismatch, long malformed) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    record Stamp(Long sequence, Long monoNs) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    record InventoryStatus(long headSequence, Long oldestRetained, Long journalBytes, Long journalPeakBytes,
                           Stamp lastPublication) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    record OwnerStatus(Owner owner, String state, String viewId, long watermark, long sourceHead, long receiptAgeMs,
                       long rows, long bytes, Stamp installed, String lastResetCause) {}

    @JsonInclude(JsonInclude.Include.ALWAYS)
    record StatusResponse(String protocol, Cluster cluster, Owner self, ScopeView scope, MembershipStatus membership,
                          String coverage, InventoryStatus inventory, List<OwnerStatus> owners, String nextPageToken,
                          SessionsStatus sessions, TransferStatus transfer) {
        StatusResponse(String protocol, Cluster cluster, Owner self, ScopeView scope, MembershipStatus membership,
                       String coverage, InventoryStatus inventory, List<OwnerStatus> owners, String nextPageToken,
                       SessionsStatus sessions) {
            this(protocol, cluster, self, scope, membership, coverage, inventory, owners, nextPageToken, sessions, null);
        }

        /** With the local tiers' figures and fault states (issue 33). */
        StatusWithTiers withTiers(List<TierHealth> tiers) {
            return new StatusWithTiers(this, tiers);
        }
    }

    /** {@code GET /cache/metadata/status}: the status fields, then {@code tiers} (issue 33: tier fault states). */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record StatusWithTiers(@com.fasterxml.jackson.annotation.JsonUnwrapped StatusResponse status, List<TierHealth> tiers) {}

    /**
     * Both transfer ends of this Manager (issue 13 item 6; docs/transfer.md): the source's grants, pins, refusals
     * and egress, the requester's READs per backend and route class, refusals, failures and windows. Map keys are
     * closed enum names in lowercase.
     */
    record TransferStatus(TransferSourceView source, TransferRequesterView requester) {}

    record TransferSourceView(String dataEndpoint, long grantsOutstanding, long pinsHeld, long pinnedBytes,
                              long prefetchPinnedBytes, long grantsIssued, java.util.Map<String, Long> grantsEnded,
                              java.util.Map<String, Long> refusals, java.util.Map<String, Long> dataRefusals,
                              java.util.Map<String, Long> readsServed, java.util.Map<String, Long> bytesServed,
                              long egressInFlightBytes, long egressInFlightBytesMax, long dataConnections,
                              java.util.Map<String, Long> sendsCut,
                              java.util.Map<String, Long> dataConnectionRefusals,
                              java.util.Map<String, Long> dataConnectionTimeouts,
                              java.util.Map<String, Long> dataReadPauses, long dataAcceptFailures) {}

    record TransferRoute(String backend, String route, long reads, long bytes, long latencySumNanos) {}

    record TransferRequesterView(String defaultBackend, List<TransferRoute> routes, long readsAdmitted,
                                 long readsTerminated, java.util.Map<String, Long> readRefusals,
                                 java.util.Map<String, Long> readFailures, long checksumFailures, long readsTimedOut,
                                 long readsCancelled, java.util.Map<String, Long> sharedMemoryFallbacks,
                                 long receiveInFlightBytes, long receiveInFlightBytesMax, long readsInFlight,
                                 long authorizeGranted, long authorizeNothingGranted,
                                 java.util.Map<String, Long> authorizeRefusals, java.util.Map<String, Long> authorizeFailures,
                                 long grantsTracked, long releasesConfirmed, long releasesNotConfirmed, long arenasMapped,
                                 long loadSummariesReceived, long loadSummariesRejected,
                                 long receiveCreditsHeldBytes, long receiveCreditsRefusals) {}

    /**
     * The InventorySessions of this Manager (DIAG-1, BND-3): the requester end's sessions (one per admitted
     * source, at most {@code sessions_per_requester_max}; admitted sources beyond the limit are listed in
     * {@code beyond_limit} and make {@code capacity_complete} false) and the source end's served sessions.
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record SessionsStatus(int admittedSources, int sessionsPerRequesterMax, boolean capacityComplete,
                          List<String> beyondLimit, List<RequesterSession> requester, List<ServedSession> served,
                          List<String> sourceSessionsRefusedMembers, long sourceSessionLimitEpisodes) {}

    record RequesterSession(Owner source, String state, long connects, long installs, String lastErrorCause) {}

    record ServedSession(Owner requester, String sessionId, String phase, long cursor, long lastFrame,
                         long outstandingBytes, long peakOutstandingBytes, long snapshotAttempts, long snapshotAborts) {}

    /**
     * One tier in /health and status: {@code state} "ok" or "degraded" (issue 33: its storage failed a write and no
     * write succeeded since), {@code fault} the last failure while degraded (null when ok), {@code write_faults} the
     * write failures since start.
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    record TierHealth(String medium, long blocks, long residentBytes, long capacityBytes, String state, TierFault fault,
                      long writeFaults) {}

    /** A tier's current write fault: reason (a tier refusal name), message, failures in this episode, ages in ms. */
    record TierFault(String reason, String message, long failures, long sinceMs, long lastMs) {}

    /**
     * @param reasons why the status is not "ok" when a tier is degraded (issue 33); empty otherwise
     * @param sourceSessionsRefusedMembers current members this source refuses with SESSION_LIMIT (issue 33; omitted
     *     when none): with any, status is "degraded"
     */
    record HealthResponse(String status, String mode, List<TierHealth> tiers, List<String> reasons,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> sourceSessionsRefusedMembers) {}

    record ErrorBody(String code, String message) {}

    record ErrorResponse(ErrorBody error) {}
}
