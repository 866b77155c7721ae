package orbitkv.recovery;

import java.util.List;
import java.util.OptionalLong;

/**
 * One page of retained route traces, newest first (the paginated status form).
 *
 * @param traces at most the requested number
 * @param nextBeforeId pass as {@code beforeId} for the next (older) page; empty on the last page
 */
public record TracePage(List<RouteTrace> traces, OptionalLong nextBeforeId) {
    public TracePage {
        traces = List.copyOf(traces);
        java.util.Objects.requireNonNull(nextBeforeId, "nextBeforeId");
    }
}
