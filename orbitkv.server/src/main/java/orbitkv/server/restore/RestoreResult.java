package orbitkv.server.restore;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import orbitkv.server.tier.CopyOutBudget;

/**
 * What one restore delivered, in the domain's terms: the verified records in request order grouped by the route that
 * delivered them, the served blocks, the named stop (docs/api.md) and the planner's trace. The consumer owns the
 * records and their charge to the restore memory budget: it sends them (and returns the charge when they are freed)
 * or calls {@link #release()}.
 *
 * @param stop the stop with its detail, e.g. {@code complete} or {@code corrupt-ssd corrupt=crc-mismatch}
 * @param trace the planner's bounded trace (ROUTE-3)
 */
public record RestoreResult(List<DeliveredRoute> delivered, int restoredKeys, String stop,
        List<RouteHeader.Served> served, String trace, CopyOutBudget budget) {
    public RestoreResult {
        delivered = List.copyOf(delivered);
        served = List.copyOf(served);
        Objects.requireNonNull(stop, "stop");
        Objects.requireNonNull(trace, "trace");
        Objects.requireNonNull(budget, "budget");
    }

    /**
     * One route's delivered records (framed: header, then the verified payload) and the bytes charged for them.
     *
     * @param chargedBytes what the route's records hold of the restore memory budget until they are freed
     */
    public record DeliveredRoute(List<ByteBuf> records, long chargedBytes, List<RouteHeader.Served> served) {
        public DeliveredRoute {
            records = List.copyOf(records);
            served = List.copyOf(served);
        }

        /** Frees the records and returns their charge to {@code budget} (a consumer that will not send them). */
        public void release(CopyOutBudget budget) {
            records.forEach(ByteBuf::release);
            budget.release(chargedBytes);
        }
    }

    /** The served runs and the stop as one line (the {@code X-OrbitKV-Route} text). */
    public String routeHeader() {
        return RouteHeader.of(served, stop);
    }

    /** Frees every delivered record and returns its charge (nothing will be sent). */
    public void release() {
        delivered.forEach(d -> d.release(budget));
    }

    /** The records of every route in request order. */
    public List<ByteBuf> records() {
        List<ByteBuf> out = new ArrayList<>(restoredKeys);
        delivered.forEach(d -> out.addAll(d.records()));
        return out;
    }
}
