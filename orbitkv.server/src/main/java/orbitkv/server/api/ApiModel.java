package orbitkv.server.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import orbitkv.server.incarnation.IncarnationStatus.Fence;
import orbitkv.server.incarnation.IncarnationStatus.Owner;
import orbitkv.server.incarnation.IncarnationStatus.StatusResponse;

/**
 * The JSON response bodies of HTTP API v1 (DESIGN §7), serialized by Jackson with snake_case names.
 * Field names are a user-facing contract (docs/api.md): additions only.
 */
public final class ApiModel {
    private ApiModel() {}

    public record SavedBlock(String key, String medium, long sequence, long size) {}

    /** A record of the save body that was not stored because of tier state (not of the request). */
    public record RefusedBlock(String key, String code, String message) {}

    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record SaveResponse(String namespace, List<SavedBlock> saved, long headSequence, List<RefusedBlock> refused) {}

    public record Replica(Owner owner, String medium, long sequence, long size, boolean local, boolean stale) {}

    public record Candidate(String key, List<Replica> replicas, boolean truncated) {}

    public record QueryResponse(String coverage, long viewGeneration, int recoverablePrefix, String prefixStop,
                         List<Candidate> candidates) {}

    /** One retained restore route trace (ROUTE-3): its header form plus the fields a dashboard filters on. */
    public record RouteTraceView(long id, String trace, int demandKeys, int restoredKeys, String stop, int plannedPrefixKeys,
                          String plannedStop, String selectionMode, String decision, List<String> replans,
                          long readyNanos, int drainPending, Long loadAgeNs) {}

    /** {@code GET /cache/metadata/routes}: newest first; {@code next_before_id} pages to older ones. */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record RouteTracesResponse(List<RouteTraceView> traces, String nextBeforeId) {}

    public record EvictResponse(long evicted, long headSequence) {}

    /** One residence of {@code GET /cache/metadata/residences}: block identity, tier, residency sequence, size. */
    public record ResidenceView(String namespace, String key, String medium, long sequence, long size) {}

    /** {@code GET /cache/metadata/residences}: one page in resident-map order; {@code next_cursor} null on the last. */
    public record ResidencesResponse(long headSequence, String namespace, List<ResidenceView> residences, String nextCursor) {}

    public record SyncFenceResponse(Fence inventoryFence) {}

    public record SyncStandaloneResponse(boolean standalone) {}

    /** {@code GET /cache/metadata/status}: the status fields, then {@code tiers} (issue 33: tier fault states). */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record StatusWithTiers(@com.fasterxml.jackson.annotation.JsonUnwrapped StatusResponse status, List<TierHealth> tiers,
                                  AdmissionView admission, SpeculationView speculation) {}

    /**
     * One tier in /health and status: {@code state} "ok" or "degraded" (issue 33: its storage failed a write and no
     * write succeeded since), {@code fault} the last failure while degraded (null when ok), {@code write_faults} the
     * write failures since start.
     */
    @JsonInclude(JsonInclude.Include.ALWAYS)
    public record TierHealth(String medium, long blocks, long residentBytes, long capacityBytes, String state, TierFault fault,
                      long writeFaults) {}

    /** A tier's current write fault: reason (a tier refusal name), message, failures in this episode, ages in ms. */
    public record TierFault(String reason, String message, long failures, long sinceMs, long lastMs) {}

    /**
     * @param reasons why the status is not "ok" when a tier is degraded (issue 33); empty otherwise
     * @param sourceSessionsRefusedMembers current members this source refuses with SESSION_LIMIT (issue 33; omitted
     *     when none): with any, status is "degraded"
     */
    public record HealthResponse(String status, String mode, List<TierHealth> tiers, List<String> reasons,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> sourceSessionsRefusedMembers) {}

    public record ErrorBody(String code, String message) {}

    public record ErrorResponse(ErrorBody error) {}
}
