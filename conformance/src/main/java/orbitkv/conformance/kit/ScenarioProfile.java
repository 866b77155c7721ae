package orbitkv.conformance.kit;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import orbitkv.membership.Endpoint;

/**
 * What the session scenario classes ({@link SourceScenarios}, {@link RequesterScenarios}) need to know of a target
 * besides its ports (issue 34 item 6): where its peer listener is, how the kit names its members and the target's
 * configured bounds the crafted traffic depends on. {@link KitSettings#profile()} gives it for a Manager given by
 * address; the in-process table builds one for its in-process target.
 *
 * @param targetPeer the target's peer gRPC listener (InventorySession v4), dialled by the kit's requesters
 * @param peerTls the kit's peer mutual TLS (one certificate per kit member), empty = plaintext
 * @param memberPrefix node-id prefix of the kit's members
 * @param answerBound bound of every single wait for an answer or a state change
 * @param targetFrameEncodedBytesMax the target requester's encoded frame bound
 * @param targetFrameDecodedBytesMax the target requester's decoded frame bound
 * @param targetIdleLivenessMs the target source's idle liveness interval
 * @param targetSourceSessionsMax the target source's session limit, when known (else session_limit is N/A)
 */
record ScenarioProfile(Endpoint targetPeer, Optional<KitPeerTls> peerTls, String memberPrefix, Duration answerBound,
        long targetFrameEncodedBytesMax, long targetFrameDecodedBytesMax, long targetIdleLivenessMs,
        OptionalInt targetSourceSessionsMax) {
    ScenarioProfile {
        Objects.requireNonNull(targetPeer, "targetPeer");
        Objects.requireNonNull(peerTls, "peerTls (Optional.empty() for plaintext)");
        Objects.requireNonNull(memberPrefix, "memberPrefix");
        Objects.requireNonNull(answerBound, "answerBound");
        Objects.requireNonNull(targetSourceSessionsMax, "targetSourceSessionsMax (OptionalInt.empty() when unknown)");
        if (targetFrameEncodedBytesMax < 1 || targetFrameEncodedBytesMax > targetFrameDecodedBytesMax) {
            throw new IllegalArgumentException("targetFrameEncodedBytesMax (" + targetFrameEncodedBytesMax
                    + ") must be positive and at most targetFrameDecodedBytesMax (" + targetFrameDecodedBytesMax + ")");
        }
    }
}
