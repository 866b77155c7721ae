package orbitkv.transfer;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import orbitkv.transfer.AuthorizeOutcome.AuthorizeFailure;

/**
 * A snapshot of a requester engine (plain numbers; every map is keyed by a closed enum and lists every
 * constant). The events of INV-8 are counted apart: admission ({@code readsAdmitted}), physical termination
 * ({@code readsTerminated}), verified completion (the {@code routes} counts, the only READs counted as drained),
 * and release ({@code releases*}).
 *
 * @param routes completed READs per (backend, route class), all four pairs
 * @param readsAdmitted READs that passed admission (credits taken)
 * @param readsTerminated admitted READs that physically stopped (every outcome but a refusal)
 * @param readRefusals READs refused, by reason
 * @param readFailures READs failed, by reason (checksum mismatches included)
 * @param checksumFailures READs whose bytes did not match the grant's CRC32C
 * @param readsTimedOut READs whose deadline passed first (never counted as drained)
 * @param readsCancelled READs the requester cancelled (never counted as drained)
 * @param sharedMemoryFallbacks READs that preferred shared memory and went over TCP, by reason
 * @param receiveInFlightBytes bytes of admitted READs not yet terminated (the receive window in use)
 * @param readsInFlight admitted READs not yet terminated
 * @param authorizeGranted Authorize calls that granted at least one block
 * @param authorizeNothingGranted Authorize calls whose every block was refused
 * @param authorizeRefusals source refusals seen, by reason (request-level per call, block-level per block)
 * @param authorizeFailures Authorize calls without a usable answer, by failure
 * @param grantsTracked grants this engine tracks (issued, not yet released or past their local deadline)
 * @param releasesConfirmed releases the source confirmed ({@code Released} or {@code AlreadyEnded})
 * @param releasesNotConfirmed releases that failed (the source's expiry then ends those grants)
 * @param arenasMapped source arenas mapped read-only now
 * @param loadSummariesReceived well-formed source load summaries delivered with Authorize outcomes (ROUTE-9)
 * @param loadSummariesRejected source load summaries dropped as malformed (the outcome they came with stands)
 * @param releasesFolded releases without a Release call (issue 37 item 5): the source honoured
 *     {@code release_after_last_read} and every granted block was READ complete over TCP, so the source ended the
 *     grant at its last send
 * @param authorizesOnDataChannel Authorize answers received as AUTHORIZE frames on a data connection (issue 37 item
 *     5): the source's data endpoint was known from an earlier grant of the same incarnation, so no gRPC call ran
 * @param dataChannelAuthorizeFallbacks Authorizes asked on a data connection and then asked over gRPC: the
 *     connection failed before the answer, or the source does not take the frame (then it is not asked so again)
 */
public record TransferEngineStatus(List<RouteStatus> routes, long readsAdmitted, long readsTerminated,
        Map<ReadRefusal, Long> readRefusals, Map<ReadFailure, Long> readFailures, long checksumFailures,
        long readsTimedOut, long readsCancelled, Map<SharedMemoryFallback, Long> sharedMemoryFallbacks,
        long receiveInFlightBytes, long readsInFlight, long authorizeGranted, long authorizeNothingGranted,
        Map<RefusalReason, Long> authorizeRefusals, Map<AuthorizeFailure, Long> authorizeFailures,
        long grantsTracked, long releasesConfirmed, long releasesNotConfirmed, long arenasMapped,
        long loadSummariesReceived, long loadSummariesRejected, long releasesFolded, long authorizesOnDataChannel,
        long dataChannelAuthorizeFallbacks) {
    public TransferEngineStatus {
        routes = List.copyOf(routes);
        readRefusals = EnumCounts.copy(ReadRefusal.class, Objects.requireNonNull(readRefusals));
        readFailures = EnumCounts.copy(ReadFailure.class, Objects.requireNonNull(readFailures));
        sharedMemoryFallbacks = EnumCounts.copy(SharedMemoryFallback.class, Objects.requireNonNull(sharedMemoryFallbacks));
        authorizeRefusals = EnumCounts.copy(RefusalReason.class, Objects.requireNonNull(authorizeRefusals));
        authorizeFailures = EnumCounts.copy(AuthorizeFailure.class, Objects.requireNonNull(authorizeFailures));
    }

    /** The completed READs of one (backend, route class) pair. */
    public RouteStatus route(Backend backend, PeerRouteClass route) {
        for (RouteStatus r : routes) {
            if (r.backend() == backend && r.route() == route) {
                return r;
            }
        }
        throw new IllegalArgumentException("no route status for " + backend + "/" + route);
    }
}
