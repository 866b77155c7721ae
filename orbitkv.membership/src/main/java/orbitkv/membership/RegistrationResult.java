package orbitkv.membership;

import java.util.Objects;

/**
 * The outcome of one registration attempt (DESIGN §3; MEM-2, MEM-3). Only {@link Registered} carries a
 * running {@link Membership}; every other variant changed nothing in etcd.
 */
public sealed interface RegistrationResult {
    /** Registered as a new incarnation at the next node epoch; renewal and watch are running. */
    record Registered(Membership membership) implements RegistrationResult {
        public Registered {
            Objects.requireNonNull(membership, "membership");
        }
    }

    /** No format record exists: a Manager never creates one (an empty and a wiped cluster must differ). */
    record Unformatted(String formatKey) implements RegistrationResult {
        public String message() {
            return "cluster is not formatted: " + formatKey + " does not exist; run `orbitkv admin format`";
        }
    }

    /**
     * The format record holds another value: an older (or newer) binary's cluster. This is how old and
     * new binaries refuse each other (MEM-3).
     */
    record FormatMismatch(String formatKey, String expected, String found) implements RegistrationResult {
        public String message() {
            return "format mismatch at " + formatKey + ": this binary requires " + quote(expected)
                    + " but etcd holds " + quote(found);
        }

        private static String quote(String v) {
            return "'" + v.replace("\n", "\\n") + "'";
        }
    }

    /** The format record's cluster UUID is not the one this process expects (MEM-8). */
    record ClusterMismatch(String expectedUuid, String foundUuid) implements RegistrationResult {
        public String message() {
            return "cluster uuid mismatch: expected " + expectedUuid + ", format record holds " + foundUuid;
        }
    }

    /**
     * Another registration of the same node id committed between this attempt's read and its
     * transaction: two processes race for one node id and exactly one wins.
     */
    record Contended(NodeId nodeId, String detail) implements RegistrationResult {}

    /**
     * A heal ({@link Membership#reregister()}) found the node id held by another incarnation than the fenced
     * one: another process registered it meanwhile. A heal never takes a node id away from a live process
     * (the two would fence each other in turn); the fenced process stays fenced.
     */
    record Superseded(NodeId nodeId, String holder) implements RegistrationResult {
        public Superseded {
            Objects.requireNonNull(nodeId, "nodeId");
            Objects.requireNonNull(holder, "holder");
        }

        public String message() {
            return "node id " + nodeId.value() + " is now held by " + holder + ": another process registered it";
        }
    }

    /**
     * Every etcd endpoint refused the TLS handshake (issue 33): wrong CA, a client certificate etcd does not
     * accept, a plaintext server behind {@code https://}, an expired certificate. Named within 2 s of the first
     * attempt by a direct probe with the client's own TLS context, instead of call deadlines running out.
     *
     * @param detail each endpoint with its handshake cause
     */
    record TlsRefused(String detail) implements RegistrationResult {
        public TlsRefused {
            Objects.requireNonNull(detail, "detail");
        }

        public String message() {
            return detail + "; check --etcd-ca-file, --etcd-cert-file and --etcd-key-file against the etcd server's TLS settings";
        }
    }

    /** etcd did not answer within the call deadlines and bounded retries. */
    record Unavailable(String cause) implements RegistrationResult {}
}
