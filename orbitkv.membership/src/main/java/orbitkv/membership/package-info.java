/**
 * Membership contract (DESIGN §3): who is admitted, at which incarnation, behind which format guard.
 *
 * <p>etcd holds membership only (MEM-4); every other module consumes membership through
 * {@link orbitkv.membership.MembershipView} and reacts to {@link orbitkv.membership.MembershipEvent}s.
 */
package orbitkv.membership;
