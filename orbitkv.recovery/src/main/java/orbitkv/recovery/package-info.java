/**
 * Recovery route selection, the exported contract (DESIGN §8; ROUTE-1..ROUTE-11, IDX-14).
 *
 * <p>A {@link orbitkv.recovery.Demand} (keys of one prefix in chain order, a completion target, a deadline) and its
 * {@link orbitkv.recovery.Evidence} (local residences, GlobalIndex replicas, coverage, qualified route kinds) go to
 * a {@link orbitkv.recovery.RouteSelection}: {@code plan} answers the recoverable prefix and the
 * {@link orbitkv.recovery.Route}s the {@link orbitkv.recovery.RoutePolicy} would run; {@code restore} executes them
 * through the Manager's {@link orbitkv.recovery.TransferPorts}, learns from every executed route
 * (observation) and explains itself in a bounded {@link orbitkv.recovery.RouteTrace}.
 * docs/recovery.md describes the policy, the cost model, the switch rule, the bounds and the trace format.
 */
package orbitkv.recovery;
