package orbitkv.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.PinOutcome;
import orbitkv.server.tier.PinnedBlock;
import orbitkv.server.tier.Residence;
import orbitkv.server.tier.SaveOutcome;
import orbitkv.server.tier.TierUsage;

/**
 * The endpoint logic of HTTP API v1 (DESIGN §7), independent of the Netty channel: each method takes an
 * already size-checked, decoded request and returns an {@link ApiResponse}; a refusal is an
 * {@link ApiException} thrown before any state changes. Local save/query/restore/evict never wait on
 * distributed metadata (INV-1, INV-10, IDX-5).
 */
final class CacheApi {
    static final String ROUTE_HEADER = "X-OrbitKV-Route";
    static final String RESTORED_HEADER = "X-OrbitKV-Restored";
    /** Replicas per medium in a candidate list (IDX-9). */
    static final int REPLICAS_PER_MEDIUM_MAX = 4;

    private static final ObjectMapper JSON = new ObjectMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);

    private final LocalTiers tiers;
    private final DistributedMetadata metadata;
    private final ApiMetrics metrics;
    private final long restoreBodyBytesMax;
    private final long syncWaitMs;

    /**
     * @param restoreBodyBytesMax bound on one restore response body (the prefix stops before exceeding it)
     * @param syncWaitMs bound on waiting for submitted saves in /cache/sync
     */
    CacheApi(LocalTiers tiers, DistributedMetadata metadata, ApiMetrics metrics, long restoreBodyBytesMax, long syncWaitMs) {
        this.tiers = Objects.requireNonNull(tiers, "tiers");
        this.metadata = Objects.requireNonNull(metadata, "metadata");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.restoreBodyBytesMax = restoreBodyBytesMax;
        this.syncWaitMs = syncWaitMs;
    }

    /**
     * {@code POST /cache/save}: every record is validated first (duplicates refused); then each block is
     * stored in order. A tier-state refusal of one block (everything pinned) is reported in {@code refused}
     * and does not undo the blocks already stored (they are real residences).
     */
    ApiResponse save(Namespace namespace, List<BlockFraming.Block> blocks) {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < blocks.size(); i++) {
            String hex = HexFormat.of().formatHex(blocks.get(i).key());
            if (!seen.add(hex)) {
                throw new ApiException(ApiError.DUPLICATE_KEY, "record " + i + " repeats key " + hex);
            }
        }
        List<ApiModel.SavedBlock> saved = new ArrayList<>(blocks.size());
        List<ApiModel.RefusedBlock> refused = new ArrayList<>();
        for (BlockFraming.Block b : blocks) {
            String hex = HexFormat.of().formatHex(b.key());
            switch (tiers.save(new StateKey(namespace, b.key()), b.payload())) {
                case SaveOutcome.Stored s -> saved.add(new ApiModel.SavedBlock(hex, s.medium().name(), s.sequence(), s.sizeBytes()));
                case SaveOutcome.Refused r -> refused.add(new ApiModel.RefusedBlock(hex, refusalCode(r).name(), r.message()));
            }
        }
        return json(200, new ApiModel.SaveResponse(text(namespace), saved, tiers.headSequence(), refused));
    }

    /** {@code POST /cache/query}: local candidates plus the index's remote ones, coverage and prefix. */
    ApiResponse query(byte[] body) {
        JsonRequests.KeysRequest req = JsonRequests.query(body);
        DistributedMetadata.Lookup lookup = metadata.lookup(req.namespace(), req.keys());
        ApiModel.Owner self = metadata.self();
        List<ApiModel.Candidate> candidates = new ArrayList<>(req.keys().size());
        int prefix = 0;
        boolean prefixOpen = true;
        for (int i = 0; i < req.keys().size(); i++) {
            StateKey key = req.keys().get(i);
            List<ApiModel.Replica> replicas = new ArrayList<>();
            for (Residence r : tiers.residences(key)) {
                replicas.add(new ApiModel.Replica(self, r.medium().name(), r.sequence(), r.sizeBytes(), true, false));
            }
            replicas.addAll(lookup.remote().get(i));
            boolean usable = replicas.stream().anyMatch(r -> !r.stale());
            if (prefixOpen && usable) {
                prefix++;
            } else {
                prefixOpen = false;
            }
            candidates.add(new ApiModel.Candidate(key.keyHex(), replicas, lookup.truncated().get(i)));
        }
        return json(200, new ApiModel.QueryResponse(lookup.coverage().name(), lookup.viewGeneration(), prefix, candidates));
    }

    /**
     * The restore stop reason for a key that is not local but that the index lists on a peer: the transfer
     * engine does not exist yet, so the answer says so explicitly instead of pretending nobody holds it
     * (and no bytes are ever invented).
     */
    static final String PEER_TRANSFER_UNAVAILABLE = "peer-transfer-unavailable";

    /** True iff the distributed index lists a replica of {@code key} on another owner (positive evidence). */
    private boolean heldByPeer(Namespace namespace, StateKey key) {
        DistributedMetadata.Lookup lookup = metadata.lookup(namespace, List.of(key));
        return !lookup.remote().isEmpty() && !lookup.remote().get(0).isEmpty();
    }

    /**
     * {@code POST /cache/restore}: the recoverable prefix from local tiers, in request order. The prefix
     * stops at the first key that is not local (peer transfer is not wired yet: never fake bytes), at a
     * refused pin, at the deadline, or before the response would exceed its byte bound; the route header
     * says why. One pin is held at a time, released after its bytes are copied.
     */
    ApiResponse restore(byte[] body, ByteBufAllocator alloc) {
        JsonRequests.RestoreRequest req = JsonRequests.restore(body);
        long deadlineNs = System.nanoTime() + req.deadlineMs() * 1_000_000L;
        CompositeByteBuf out = alloc.compositeDirectBuffer(Math.max(2, req.keys().size()));
        int dram = 0;
        int ssd = 0;
        String stop = "none";
        long total = 0;
        try {
            for (StateKey key : req.keys()) {
                if (System.nanoTime() - deadlineNs > 0) {
                    stop = "deadline";
                    break;
                }
                PinOutcome pinned = tiers.pin(key);
                if (pinned instanceof PinOutcome.NotResident) {
                    stop = heldByPeer(req.namespace(), key) ? PEER_TRANSFER_UNAVAILABLE : "not-local";
                    break;
                }
                if (pinned instanceof PinOutcome.Refused r) {
                    stop = r.reason().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
                    break;
                }
                try (PinnedBlock block = ((PinOutcome.Pinned) pinned).block()) {
                    byte[] k = key.key();
                    long record = BlockFraming.RECORD_HEADER_BYTES + k.length + block.sizeBytes();
                    if (total + record > restoreBodyBytesMax) {
                        stop = "response-bound";
                        break;
                    }
                    ByteBuf rec = alloc.directBuffer((int) record);
                    try {
                        BlockFraming.writeHeader(rec, k, block.sizeBytes());
                        ByteBuffer dst = rec.nioBuffer(rec.writerIndex(), (int) block.sizeBytes());
                        block.copyTo(dst);
                        rec.writerIndex(rec.writerIndex() + (int) block.sizeBytes());
                    } catch (RuntimeException e) {
                        rec.release();
                        throw e;
                    }
                    out.addComponent(true, rec);
                    total += record;
                    switch (block.medium()) {
                        case DRAM -> dram++;
                        case SSD -> ssd++;
                    }
                }
            }
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
        String route = "local-dram=" + dram + ";local-ssd=" + ssd + ";stop=" + stop;
        return new ApiResponse(200, BlockFraming.CONTENT_TYPE, out,
                Map.of(RESTORED_HEADER, Integer.toString(dram + ssd), ROUTE_HEADER, route));
    }

    /** {@code POST /cache/evict}: {@code evicted} counts removed (key, medium) residences. */
    ApiResponse evict(byte[] body) {
        JsonRequests.EvictRequest req = JsonRequests.evict(body);
        long evicted = 0;
        for (StateKey key : req.keys()) {
            evicted += tiers.evict(key, req.target());
        }
        return json(200, new ApiModel.EvictResponse(evicted, tiers.headSequence()));
    }

    /**
     * {@code POST /cache/sync}: waits for the saves submitted before it (SSD write-through included,
     * bounded), then returns the inventory fence, or {@code {"standalone": true}} (API-1, API-3).
     */
    ApiResponse sync() throws InterruptedException {
        if (!tiers.awaitSubmittedSaves(syncWaitMs)) {
            throw new ApiException(ApiError.AWAIT_TIMEOUT, "submitted saves were not resident within " + syncWaitMs + " ms");
        }
        return metadata.fence()
                .<ApiResponse>map(f -> json(200, new ApiModel.SyncFenceResponse(f)))
                .orElseGet(() -> json(200, new ApiModel.SyncStandaloneResponse(true)));
    }

    /** {@code POST /cache/metadata/await} (API-4): parsing here, the wait in {@link DistributedMetadata}. */
    ApiResponse await(byte[] body, long timeoutMsMax) throws InterruptedException {
        return json(200, metadata.await(JsonRequests.await(body, timeoutMsMax)));
    }

    /** {@code GET /cache/metadata/status} (DIAG-1). */
    ApiResponse status(int ownersLimit, String pageToken) {
        return json(200, metadata.status(ownersLimit, pageToken, tiers.headSequence()));
    }

    ApiResponse health() {
        List<ApiModel.TierHealth> list = new ArrayList<>(2);
        list.add(tierHealth(tiers.dram().usage()));
        if (tiers.ssd() != null) {
            list.add(tierHealth(tiers.ssd().usage()));
        }
        return json(200, new ApiModel.HealthResponse(metadata.healthStatus(), metadata.mode(), list));
    }

    ApiResponse metrics() {
        return new ApiResponse(200, ApiMetrics.CONTENT_TYPE, Unpooled.wrappedBuffer(metrics.scrape()), Map.of());
    }

    static ApiResponse error(ApiException e) {
        return json(e.error().status(), new ApiModel.ErrorResponse(new ApiModel.ErrorBody(e.error().name(), e.getMessage())));
    }

    private static ApiModel.TierHealth tierHealth(TierUsage u) {
        return new ApiModel.TierHealth(u.medium().name(), u.blocks(), u.residentBytes(), u.capacityBytes());
    }

    private static ApiError refusalCode(SaveOutcome.Refused r) {
        return switch (r.reason()) {
            case BLOCK_EXCEEDS_TIER -> ApiError.BLOCK_EXCEEDS_TIER;
            case PINS_EXHAUSTED -> ApiError.TIER_PINS_EXHAUSTED;
            case CLOSED -> ApiError.SHUTTING_DOWN;
            default -> ApiError.TIER_NO_EVICTABLE_SPACE;
        };
    }

    private static String text(Namespace ns) {
        return new String(ns.bytes(), java.nio.charset.StandardCharsets.UTF_8);
    }

    static ApiResponse json(int status, Object body) {
        try {
            return ApiResponse.json(status, JSON.writeValueAsBytes(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("response not serializable: " + body.getClass().getSimpleName(), e);
        }
    }
}
