package orbitkv.recovery;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.LongSupplier;
import orbitkv.membership.Incarnation;

/**
 * Route selection for one Manager (DESIGN §8; ROUTE-1..ROUTE-11, IDX-14): the planner, the shared cost model fed
 * only by executed routes, the executor that drives a plan through {@link TransferPorts}, the load-evidence store
 * and the trace log. Thread-safe; one instance per Manager, closed with it.
 *
 * <p>{@code /cache/query} calls {@link #plan} (its {@code prefixKeys()} is the demand-aware recoverable prefix);
 * {@code /cache/restore} calls {@link #restore}, which plans, executes, replans at most
 * {@link RoutePolicy#replansMax()} times on pre-submission refusals, records observations and the trace.
 */
public interface RouteSelection extends AutoCloseable {
    /**
     * @param policy the settings
     * @param sampling the sampled JSONL trace file ({@link TraceSampling#off()} for none)
     * @param monoNanos the monotonic clock deadlines and observations use ({@code System::nanoTime} in a Manager)
     * @throws IllegalArgumentException if the trace directory lies inside a git checkout
     * @throws java.io.UncheckedIOException if the trace file cannot be created
     */
    static RouteSelection create(RoutePolicy policy, TraceSampling sampling, LongSupplier monoNanos) {
        return new orbitkv.recovery.runtime.DefaultRouteSelection(policy, sampling, monoNanos);
    }

    /** {@code System::nanoTime}, no trace file. */
    static RouteSelection create(RoutePolicy policy) {
        return create(policy, TraceSampling.off(), System::nanoTime);
    }

    RoutePolicy policy();

    /**
     * Plans the demand on the evidence without executing anything (no observation, no trace): the recoverable
     * prefix and why it stops (IDX-14), and the routes the policy would execute now.
     *
     * @throws IllegalArgumentException if the evidence does not list exactly the demand's keys in order
     */
    Plan plan(Demand demand, Evidence evidence);

    /**
     * Plans and executes the demand through {@code ports} on the calling thread: one READ in flight plus one next
     * authorization; at most {@link RoutePolicy#replansMax()} replans after pre-submission refusals within the
     * demand's deadline, each on request-local evidence only; after submission nothing else is raced into a
     * route's destination and nothing is retried after a payload failure. Returns when the prefix is delivered or
     * ends; submitted routes that have not drained keep their grants and credits until they do.
     *
     * @throws IllegalArgumentException if the evidence does not list exactly the demand's keys in order
     */
    <D> Restore<D> restore(Demand demand, Evidence evidence, TransferPorts<D> ports);

    /** Stores a peer's load summary, stamped with local receipt time (ROUTE-9). */
    LoadSummary.Recorded recordLoad(LoadSummary summary);

    /** The retained, unexpired load summary of exactly this incarnation. */
    Optional<LoadSummary.Aged> load(Incarnation owner);

    /** Every class's current estimate, ordered by class (diagnostics). */
    List<CostEstimate> costs();

    /** Retained traces, newest first, older than {@code beforeId} when given (at most {@code limit}, 1..1024). */
    TracePage traces(int limit, OptionalLong beforeId);

    RouteMetrics metrics();

    /** Closes the trace file. Restores still running finish normally. */
    @Override
    void close();
}
