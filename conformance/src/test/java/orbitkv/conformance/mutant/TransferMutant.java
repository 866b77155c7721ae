package orbitkv.conformance.mutant;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.BlockRefusal;
import orbitkv.transfer.wire.BlockResult;
import orbitkv.transfer.wire.RefusalReason;
import orbitkv.transfer.wire.ReleaseResponse;
import orbitkv.transfer.wire.ReleaseStatus;

/**
 * A broken implementation of the transfer protocol (issue 40 item 5), made from a correct one (a real Manager) by
 * rewriting what its source side answers: the Authorize and Release answers through an {@link AuthorizeRewriteProxy},
 * the data channel's responses through a {@link DataRewriteProxy}. Test-only, like the session {@link Mutant}s;
 * {@link TransferMutantKitTest} runs the kit's transfer rows against each and pins the rows that fail.
 */
enum TransferMutant {
    /** BND-1: every request-level refusal is named MALFORMED_REQUEST, whatever its cause. */
    AUTHORIZE_REFUSALS_UNNAMED("every request-level Authorize refusal is answered MALFORMED_REQUEST"),
    /** INV-2 INV-3: a stale residence is refused as NOT_RESIDENT, without the current residency sequence. */
    AUTHORIZE_GENERATION_UNNAMED("a STALE_GENERATION block refusal is answered NOT_RESIDENT with no current_sequence"),
    /** INV-9: the grant outlives the expiry the answer states (expiry_ms is a quarter of the source's). */
    AUTHORIZE_EXPIRY_UNDERSTATED("Authorized.expiry_ms is a quarter of the expiry the source keeps"),
    /** INV-2 INV-9: a Release by another requester than the grant's is answered RELEASED. */
    RELEASE_BY_ANYONE("a RELEASE_REFUSED answer is turned into RELEASED"),
    /** ROUTE-8: a block already sent is sent again (the first payload replayed instead of ALREADY_READ). */
    DATA_SERVES_TWICE("a READ answered ALREADY_READ is answered OK with the block's first payload again", ServesTwice::new),
    /** INV-2 INV-8: the payload is not the granted block (its first byte flipped). */
    DATA_CORRUPT_PAYLOAD("the first payload byte of every OK response is flipped", () -> new DataRewrite() {
        @Override
        byte[] response(byte[] header, byte[] payload) {
            if (header[5] == 0 && payload.length > 0) {
                payload[0] ^= 1;
            }
            return super.response(header, payload);
        }
    }),
    /** INV-9: a READ of an ended or unknown grant is answered BLOCK_NOT_GRANTED instead of GRANT_UNKNOWN. */
    DATA_GRANT_UNKNOWN_UNNAMED("status 1 GRANT_UNKNOWN is answered as 2 BLOCK_NOT_GRANTED", () -> new DataRewrite() {
        @Override
        byte[] response(byte[] header, byte[] payload) {
            if (header[5] == 1) {
                header[5] = 2;
            }
            return super.response(header, payload);
        }
    }),
    /** BND-1: after MALFORMED the connection stays open (the requester's side is never closed). */
    DATA_MALFORMED_STAYS_OPEN("after a 5 MALFORMED response the requester's connection is held open", () -> new DataRewrite() {
        @Override
        boolean holdOpenAfter(int status) {
            return status == 5;
        }
    });

    private final String breakage;
    private final Supplier<DataRewrite> data;

    TransferMutant(String breakage) {
        this(breakage, DataRewrite::new);
    }

    TransferMutant(String breakage, Supplier<DataRewrite> data) {
        this.breakage = breakage;
        this.data = data;
    }

    String breakage() {
        return breakage;
    }

    /** A fresh per-connection data rewrite. */
    DataRewrite data() {
        return data.get();
    }

    /** The Authorize answer as this mutant sends it (the same object when unchanged). */
    AuthorizeResponse authorized(AuthorizeResponse r) {
        return switch (this) {
            case AUTHORIZE_REFUSALS_UNNAMED -> r.hasRefused() && r.getRefused().getReason() != RefusalReason.MALFORMED_REQUEST
                    ? r.toBuilder().setRefused(r.getRefused().toBuilder().setReason(RefusalReason.MALFORMED_REQUEST)).build() : r;
            case AUTHORIZE_GENERATION_UNNAMED -> generationUnnamed(r);
            case AUTHORIZE_EXPIRY_UNDERSTATED -> r.hasAuthorized()
                    ? r.toBuilder().setAuthorized(r.getAuthorized().toBuilder().setExpiryMs(r.getAuthorized().getExpiryMs() / 4)).build() : r;
            default -> r;
        };
    }

    /** The Release answer as this mutant sends it. */
    ReleaseResponse released(ReleaseResponse r) {
        return this == RELEASE_BY_ANYONE && r.getStatus() == ReleaseStatus.RELEASE_REFUSED
                ? r.toBuilder().setStatus(ReleaseStatus.RELEASED).build() : r;
    }

    private static AuthorizeResponse generationUnnamed(AuthorizeResponse r) {
        if (!r.hasAuthorized()) {
            return r;
        }
        var a = r.getAuthorized().toBuilder();
        boolean changed = false;
        for (int i = 0; i < a.getBlocksCount(); i++) {
            BlockResult b = a.getBlocks(i);
            if (b.hasRefused() && b.getRefused().getReason() == RefusalReason.STALE_GENERATION) {
                a.setBlocks(i, BlockResult.newBuilder().setRefused(BlockRefusal.newBuilder().setReason(RefusalReason.NOT_RESIDENT)
                        .setDetail(b.getRefused().getDetail())));
                changed = true;
            }
        }
        return changed ? r.toBuilder().setAuthorized(a).build() : r;
    }

    /** What a {@link DataRewriteProxy} does to one data connection; the identity by default. */
    static class DataRewrite {
        /** A 40-byte request the requester sent (already relayed). */
        void request(byte[] frame) {}

        /** The bytes forwarded for one response (32-byte {@code header}, then {@code payload}). */
        byte[] response(byte[] header, byte[] payload) {
            return ByteBuffer.allocate(header.length + payload.length).put(header).put(payload).array();
        }

        /** True: after a response of {@code status}, the requester's side stays open when the source closes. */
        boolean holdOpenAfter(int status) {
            return false;
        }
    }

    /** Remembers each OK payload by (grant, block) and replays it for an ALREADY_READ answer of the same block. */
    private static final class ServesTwice extends DataRewrite {
        /** Bounded by the kit's handful of READs per connection; a flood would only make the mutant forget. */
        private static final int REMEMBERED_MAX = 256;
        private final Map<Long, String> blockOfRead = new HashMap<>();
        private final Map<String, byte[]> sent = new HashMap<>();

        @Override
        synchronized void request(byte[] frame) {
            ByteBuffer b = ByteBuffer.wrap(frame);
            if (frame[5] == 1 && blockOfRead.size() < REMEMBERED_MAX) {
                blockOfRead.put(b.getLong(32), b.getLong(8) + ":" + b.getLong(16) + ":" + b.getInt(24));
            }
        }

        @Override
        synchronized byte[] response(byte[] header, byte[] payload) {
            ByteBuffer h = ByteBuffer.wrap(header);
            String block = blockOfRead.get(h.getLong(8));
            if (block != null && header[5] == 0 && sent.size() < REMEMBERED_MAX) {
                sent.put(block, super.response(header, payload));
            } else if (block != null && header[5] == 3 && sent.containsKey(block)) {
                byte[] again = sent.get(block).clone();
                ByteBuffer.wrap(again).putLong(8, h.getLong(8)); // the new READ's id
                return again;
            }
            return super.response(header, payload);
        }
    }
}
