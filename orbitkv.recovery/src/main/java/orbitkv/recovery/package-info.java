/**
 * Recovery contract (DESIGN §8, ROUTE-*). The planner arrives with its own issue.
 */
package orbitkv.recovery;
