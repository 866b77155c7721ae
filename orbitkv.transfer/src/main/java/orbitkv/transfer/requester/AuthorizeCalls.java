package orbitkv.transfer.requester;

import com.google.protobuf.ByteString;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import orbitkv.membership.ClusterIdentity;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.transfer.AuthorizeOutcome;
import orbitkv.transfer.AuthorizeOutcome.AuthorizeFailure;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.BlockResult;
import orbitkv.transfer.GrantRequest;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.SourceLoad;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.WireCodec;
import orbitkv.transfer.frame.WireCodec.WireException;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.Authorized;
import orbitkv.transfer.wire.ReleaseRequest;

/** Builds the requester's messages and checks the source's answers against the schema (docs/transfer.md). */
final class AuthorizeCalls {
    private AuthorizeCalls() {}

    /** A bound on an Authorize response for {@code blocks} blocks: every detail at its 1,024-byte cap, a long path. */
    static int responseBytesMax(int blocks) {
        return 8192 + blocks * (WireCodec.DETAIL_BYTES_MAX + 64);
    }

    static AuthorizeRequest request(GrantRequest req, Incarnation self, ClusterIdentity cluster, UUID bootId) {
        AuthorizeRequest.Builder b = AuthorizeRequest.newBuilder().setProtocol(WireCodec.PROTOCOL)
                .setClusterUuid(WireCodec.uuid(cluster.uuid())).setRequester(WireCodec.incarnation(self))
                .setSource(WireCodec.incarnation(req.source().incarnation())).setIntent(WireCodec.intent(req.intent()))
                .setRequesterBootId(WireCodec.bootId(bootId))
                .setReleaseAfterLastRead(true); // issue 37 item 5: no Release call when every block was READ over TCP
        for (BlockRef r : req.blocks()) {
            b.addBlocksBuilder().setNamespace(ByteString.copyFrom(r.key().namespace().bytes()))
                    .setKey(ByteString.copyFrom(r.key().key())).setMedium(WireCodec.medium(r.medium()))
                    .setResidencySequence(r.residencySequence());
        }
        return b.build();
    }

    static ReleaseRequest release(UUID grantId, Incarnation self, ClusterIdentity cluster) {
        return ReleaseRequest.newBuilder().setProtocol(WireCodec.PROTOCOL).setClusterUuid(WireCodec.uuid(cluster.uuid()))
                .setRequester(WireCodec.incarnation(self)).setGrantId(WireCodec.uuid(grantId)).build();
    }

    /** A checked Authorized answer. */
    record Answer(UUID grantId, byte[] secret, Duration expiry, Endpoint data, UUID sourceBootId,
            IssuedGrant.ArenaRef arena, List<BlockResult> blocks, long[] arenaOffsets, boolean releaseAfterLastRead) {}

    /** A protocol violation in an answer; {@code grantId} is set when the answer named one (to release it). */
    static final class Violation extends Exception {
        private static final long serialVersionUID = 1L;
        final transient UUID grantId;

        Violation(String message, UUID grantId) {
            super(message, null, false, false);
            this.grantId = grantId;
        }
    }

    /**
     * The outcome of a response other than a grant ({@code Refused}), or null when it authorized (then
     * {@link #answer} reads it).
     */
    static AuthorizeOutcome refusal(AuthorizeResponse r, Optional<SourceLoad> load) {
        return switch (r.getOutcomeCase()) {
            case REFUSED -> {
                RefusalReason reason = WireCodec.reason(r.getRefused().getReason());
                yield reason == null || reason.level() != RefusalReason.Level.REQUEST
                        ? new AuthorizeOutcome.Failed(AuthorizeFailure.PROTOCOL_VIOLATION,
                                "refusal with reason " + r.getRefused().getReasonValue())
                        : new AuthorizeOutcome.Refused(reason, r.getRefused().getDetail(), load);
            }
            case AUTHORIZED -> null;
            case OUTCOME_NOT_SET -> new AuthorizeOutcome.Failed(AuthorizeFailure.PROTOCOL_VIOLATION, "empty response");
        };
    }

    static Answer answer(Authorized a, GrantRequest req) throws Violation {
        UUID grantId = a.hasGrantId() ? new UUID(a.getGrantId().getMsb(), a.getGrantId().getLsb()) : null;
        int n = req.blocks().size();
        if (a.getBlocksCount() != n) {
            throw new Violation(a.getBlocksCount() + " block results for " + n + " blocks", grantId);
        }
        List<BlockResult> blocks = new ArrayList<>(n);
        long[] offsets = new long[n];
        boolean anyGranted = false;
        for (int i = 0; i < n; i++) {
            offsets[i] = -1;
            BlockResult r = blockResult(a, i, req.blocks().get(i), offsets, grantId);
            blocks.add(r);
            anyGranted |= r instanceof BlockResult.Granted;
        }
        if (anyGranted != (grantId != null)) {
            throw new Violation(anyGranted ? "granted blocks without a grant id" : "a grant id without granted blocks",
                    grantId);
        }
        if (!anyGranted) {
            return new Answer(null, null, Duration.ZERO, null, null, null, blocks, offsets, false);
        }
        if (a.getGrantSecret().size() != DataFrames.SECRET_BYTES) {
            throw new Violation("grant_secret must be " + DataFrames.SECRET_BYTES + " bytes, got "
                    + a.getGrantSecret().size(), grantId);
        }
        if (a.getExpiryMs() < 1) {
            throw new Violation("expiry_ms must be 1..2^63-1", grantId);
        }
        Endpoint data;
        UUID sourceBoot;
        try {
            data = new Endpoint(a.getData().getHost(), a.getData().getPort());
            sourceBoot = WireCodec.bootId("source_boot_id", a.getSourceBootId());
        } catch (IllegalArgumentException | WireException e) {
            throw new Violation("data endpoint or boot id: " + e.getMessage(), grantId);
        }
        return new Answer(grantId, a.getGrantSecret().toByteArray(), Duration.ofMillis(a.getExpiryMs()), data, sourceBoot,
                arena(a, grantId), blocks, offsets, a.getReleaseAfterLastRead());
    }

    /** Block {@code i}'s result; a granted block in the arena gets its offset in {@code offsets[i]}. */
    private static BlockResult blockResult(Authorized a, int i, BlockRef ref, long[] offsets, UUID grantId) throws Violation {
        orbitkv.transfer.wire.BlockResult w = a.getBlocks(i);
        switch (w.getResultCase()) {
            case GRANTED -> {
                long length = w.getGranted().getLength();
                if (length < 0) {
                    throw new Violation("block " + i + " length overflows", grantId);
                }
                if (w.getGranted().getInArena()) {
                    if (!a.hasArena() || w.getGranted().getArenaOffset() < 0) {
                        throw new Violation("block " + i + " is in an arena the answer does not name", grantId);
                    }
                    offsets[i] = w.getGranted().getArenaOffset();
                }
                return new BlockResult.Granted(ref, length, w.getGranted().getCrc32C());
            }
            case REFUSED -> {
                RefusalReason reason = WireCodec.reason(w.getRefused().getReason());
                long current = w.getRefused().getCurrentSequence();
                if (reason == null || reason.level() != RefusalReason.Level.BLOCK || current < 0) {
                    throw new Violation("block " + i + " refused with reason " + w.getRefused().getReasonValue(), grantId);
                }
                return new BlockResult.Refused(ref, reason, current, w.getRefused().getDetail());
            }
            default -> throw new Violation("block " + i + " has no result", grantId);
        }
    }

    /** The arena the answer names, or null; its path must be absolute. */
    private static IssuedGrant.ArenaRef arena(Authorized a, UUID grantId) throws Violation {
        if (!a.hasArena()) {
            return null;
        }
        var s = a.getArena();
        if (s.getPath().isEmpty() || !s.getPath().startsWith("/") || s.getSizeBytes() < 0) {
            throw new Violation("arena path must be absolute", grantId);
        }
        return new IssuedGrant.ArenaRef(s.getPath(), s.getDevice(), s.getInode(), s.getSizeBytes());
    }
}
