package orbitkv.conformance.kit;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Endpoint;

/**
 * One conformance run's validated settings: the target by address only, the kit's own listener, the
 * report file and the target's configured bounds the scenarios depend on (defaults = DESIGN §9).
 *
 * @param targetPeer the target's peer gRPC listener (InventorySession v4)
 * @param targetHttp the base URL of the target's HTTP API v1
 * @param etcd the etcd endpoints of the target's cluster
 * @param cluster the cluster name (the guard prefix {@code /orbitkv/v2/<cluster>/})
 * @param listen where the kit's own adversarial source listens (port 0 picks one)
 * @param advertise the endpoint the kit's members advertise in etcd (what the target dials); empty = the
 *     listen host and the bound port
 * @param report the JUnit XML report file
 * @param skipPolicy skip rows tagged {@code policy:*} (this implementation's policy, not the protocol)
 * @param memberPrefix node-id prefix of the kit's members
 * @param answerBound bound of every single wait for an answer or a state change
 * @param targetFrameEncodedBytesMax the target requester's encoded frame bound
 * @param targetFrameDecodedBytesMax the target requester's decoded frame bound
 * @param targetIdleLivenessMs the target source's idle liveness interval
 * @param targetSourceSessionsMax the target source's session limit, when known (else session_limit is N/A)
 * @param only scenario ids ({@code side/scenario}) to run; empty = all
 * @param rowDeadline every row's hard deadline from its start ({@code --row-deadline-ms})
 * @param runDeadline the whole run's wall bound ({@code --run-deadline-ms}); rows not started by then fail
 * @param allowFencing {@code --allow-fencing}: the kit may revoke the target's lease through etcd (destructive)
 * @param peerTls {@code --peer-tls-dir} and {@code --peer-tls-ca-file}: the kit speaks peer mutual TLS with one
 *     certificate per kit member (issue 33); empty = plaintext
 */
record KitSettings(Endpoint targetPeer, URI targetHttp, EtcdEndpoints etcd, String cluster, InetSocketAddress listen,
        Optional<Endpoint> advertise, Path report, boolean skipPolicy, String memberPrefix, Duration answerBound, long targetFrameEncodedBytesMax,
        long targetFrameDecodedBytesMax, long targetIdleLivenessMs, OptionalInt targetSourceSessionsMax, List<String> only,
        Duration rowDeadline, Duration runDeadline, boolean allowFencing, Optional<KitPeerTls> peerTls) {
    /** gRPC's default inbound message limit: an encoded bound at or above it cannot be told apart from it. */
    static final long GRPC_INBOUND_MESSAGE_BYTES_DEFAULT = 4L << 20;
    /** Default of {@code --row-deadline-ms}. */
    static final long ROW_DEADLINE_MS_DEFAULT = 30_000;
    /** Default of {@code --run-deadline-ms}. */
    static final long RUN_DEADLINE_MS_DEFAULT = 600_000;
    /** Smallest {@code --row-deadline-ms}. */
    static final long ROW_DEADLINE_MS_MIN = 1_000;
    /** Largest {@code --row-deadline-ms} (one hour). */
    static final long ROW_DEADLINE_MS_MAX = 3_600_000;
    /** Largest {@code --run-deadline-ms} (one day). */
    static final long RUN_DEADLINE_MS_MAX = 86_400_000;

    KitSettings {
        Objects.requireNonNull(targetPeer, "--target-peer is required");
        Objects.requireNonNull(targetHttp, "--target-http is required");
        Objects.requireNonNull(etcd, "--etcd is required");
        Objects.requireNonNull(cluster, "--cluster is required");
        Objects.requireNonNull(listen, "--listen is required");
        Objects.requireNonNull(advertise, "advertise must not be null (use Optional.empty())");
        if (advertise.isEmpty() && listen.getAddress() != null && listen.getAddress().isAnyLocalAddress()) {
            throw new IllegalArgumentException("--listen " + listen.getHostString() + " is a wildcard address: give --advertise "
                    + "HOST:PORT, the address the target can dial");
        }
        Objects.requireNonNull(report, "--report is required");
        if (!"http".equals(targetHttp.getScheme()) && !"https".equals(targetHttp.getScheme())) {
            throw new IllegalArgumentException("--target-http must be an http:// or https:// URL, got '" + targetHttp + "'");
        }
        if (!memberPrefix.matches("[A-Za-z0-9._-]{1,48}")) {
            throw new IllegalArgumentException("--member-prefix must be 1..48 of [A-Za-z0-9._-] (node ids append '-req-N'), got '"
                    + memberPrefix + "'");
        }
        if (answerBound.toMillis() < 100 || answerBound.toMillis() > 600_000) {
            throw new IllegalArgumentException("--wait-ms must be 100..600000, got " + answerBound.toMillis());
        }
        if (targetFrameEncodedBytesMax < 512 || targetFrameEncodedBytesMax > targetFrameDecodedBytesMax) {
            throw new IllegalArgumentException("--target-frame-encoded-bytes-max (" + targetFrameEncodedBytesMax
                    + ") must be at least 512 and at most --target-frame-decoded-bytes-max (" + targetFrameDecodedBytesMax + ")");
        }
        if (targetIdleLivenessMs < 1 || targetIdleLivenessMs > 60_000) {
            throw new IllegalArgumentException("--target-idle-liveness-ms must be 1..60000, got " + targetIdleLivenessMs);
        }
        if (targetSourceSessionsMax.isPresent() && (targetSourceSessionsMax.getAsInt() < 1
                || targetSourceSessionsMax.getAsInt() > KitMembers.MEMBERS_MAX - 4)) {
            throw new IllegalArgumentException("--target-source-sessions-max must be 1.." + (KitMembers.MEMBERS_MAX - 4)
                    + " (the kit registers one requester per session), got " + targetSourceSessionsMax.getAsInt());
        }
        only = List.copyOf(only);
        Objects.requireNonNull(rowDeadline, "--row-deadline-ms is required");
        Objects.requireNonNull(runDeadline, "--run-deadline-ms is required");
        long row = rowDeadline.toMillis();
        if (row < ROW_DEADLINE_MS_MIN || row > ROW_DEADLINE_MS_MAX) {
            throw new IllegalArgumentException("--row-deadline-ms must be " + ROW_DEADLINE_MS_MIN + ".." + ROW_DEADLINE_MS_MAX
                    + ", got " + row);
        }
        if (row < 2 * answerBound.toMillis()) {
            throw new IllegalArgumentException("--row-deadline-ms (" + row + ") must be at least twice --wait-ms ("
                    + answerBound.toMillis() + "): a row waits up to 2 x --wait-ms for the target's session");
        }
        if (row < targetIdleLivenessMs + answerBound.toMillis()) {
            throw new IllegalArgumentException("--row-deadline-ms (" + row + ") must be at least --target-idle-liveness-ms ("
                    + targetIdleLivenessMs + ") plus --wait-ms (" + answerBound.toMillis() + "): the idle-liveness row waits that long");
        }
        long run = runDeadline.toMillis();
        if (run < row || run > RUN_DEADLINE_MS_MAX) {
            throw new IllegalArgumentException("--run-deadline-ms must be at least --row-deadline-ms (" + row + ") and at most "
                    + RUN_DEADLINE_MS_MAX + ", got " + run);
        }
        Objects.requireNonNull(peerTls, "peerTls must not be null (use Optional.empty())");
        peerTls.ifPresent(t -> t.check(KitPeerTls.nodeIds(memberPrefix, requestersMax(targetSourceSessionsMax))));
    }

    /** What the session scenario classes know of the target (issue 34 item 6). */
    ScenarioProfile profile() {
        return new ScenarioProfile(targetPeer, peerTls, memberPrefix, answerBound, targetFrameEncodedBytesMax,
                targetFrameDecodedBytesMax, targetIdleLivenessMs, targetSourceSessionsMax);
    }

    /** Kit requesters a run registers at most: three, or one more than the target's session limit (BND-3 row). */
    static int requestersMax(OptionalInt targetSourceSessionsMax) {
        return Math.max(3, targetSourceSessionsMax.orElse(0) + 1);
    }
}
