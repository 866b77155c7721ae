package orbitkv.recovery;

import java.util.Objects;
import java.util.Optional;

/**
 * The network constraint of a demand (ROUTE-3, ROUTE-11; issue 39 item 6): the admission state, when the demand was
 * made, of the node-local lane its peer routes receive on - the rx lane of this Manager's NIC in its
 * {@link NodeAdmission} window, shared with engines' P/D WRITEs. A peer route needs room in that lane before its
 * authorization and is refused ({@link AdmissionRefusal#RECEIVE_CREDITS}) when it finds none, so the cost model never
 * predicts a peer route whose need exceeds {@link #freeBytes()} as if it would run: its success probability is 0 (a
 * constraint, never seconds: bytes are not added to time). Local routes use no NIC.
 *
 * <p>What a peer route needs is the bytes of its {@code routeReadsInFlight} largest blocks ({@link #needBytes}). The
 * Manager charges a route's READs one by one (each waits in the lane's deadline order), so it builds its demand with
 * {@code routeReadsInFlight} 1: the route needs room for its largest READ.
 *
 * @param lane the lane peer routes receive on
 * @param freeBytes the lane's usable window (window minus reserve) minus what every submitter has charged now; 0 when
 *     full
 * @param routeReadsInFlight READs one peer route has in flight at once (the Manager's
 *     {@code --restore-route-reads-in-flight-max}), at least 1
 */
public record LaneHeadroom(NicLane lane, long freeBytes, int routeReadsInFlight) {
    public LaneHeadroom {
        Objects.requireNonNull(lane, "lane");
        if (freeBytes < 0) {
            throw new IllegalArgumentException("lane headroom must be >= 0 bytes, got " + freeBytes);
        }
        if (routeReadsInFlight < 1) {
            throw new IllegalArgumentException("route READs in flight must be >= 1, got " + routeReadsInFlight);
        }
    }

    /** The bytes a peer route takes from the lane: its {@link #routeReadsInFlight} largest blocks. */
    public long needBytes(Route route) {
        long[] sizes = route.blocks().stream().mapToLong(RouteBlock::sizeBytes).sorted().toArray();
        long sum = 0;
        for (int i = sizes.length - 1; i >= 0 && i >= sizes.length - routeReadsInFlight; i--) {
            sum += sizes[i];
        }
        return sum;
    }

    /** True iff a route of {@code bytes} fits the headroom. */
    public boolean fits(long bytes) {
        return bytes <= freeBytes;
    }

    /** The headroom of {@code lane} in {@code status}, empty when the status has no such lane. */
    public static Optional<LaneHeadroom> of(AdmissionStatus status, NicLane lane, int routeReadsInFlight) {
        for (AdmissionStatus.LaneStatus l : status.lanes()) {
            if (l.lane().equals(lane)) {
                return Optional.of(new LaneHeadroom(lane, Math.max(0, l.usableBytes() - l.chargedBytes()),
                        routeReadsInFlight));
            }
        }
        return Optional.empty();
    }

    /** {@code lo/rx:free=N}. */
    @Override
    public String toString() {
        return lane + ":free=" + freeBytes;
    }
}
