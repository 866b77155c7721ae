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
import java.util.Locale;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SaveBatch;
import orbitkv.server.tier.Residence;
import orbitkv.server.tier.SaveOutcome;
import orbitkv.server.tier.TierUsage;
import orbitkv.transfer.PayloadSource.CopyOutcome;
import orbitkv.transfer.PayloadSource.PinResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoint logic of HTTP API v1 (DESIGN §7), independent of the Netty channel: each method takes an
 * already size-checked, decoded request and returns an {@link ApiResponse}; a refusal is an
 * {@link ApiException} thrown before any state changes. Local save/query/restore/evict never wait on
 * distributed metadata (INV-1, INV-10, IDX-5).
 */
final class CacheApi {
    private static final Logger LOG = LoggerFactory.getLogger(CacheApi.class);
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
     * A save as it streams in (issue 20 items 3, 4): the framing decoder feeds each record straight into a
     * DRAM reservation of the save's {@link SaveBatch} (no heap copy); {@link #save(SaveStream)} commits all
     * records at once. Whoever drops the request before that calls {@link #abort()}: nothing is stored.
     */
    final class SaveStream implements BlockFraming.RecordSink {
        private final Namespace namespace;
        private final SaveBatch batch;
        private final BlockFraming.Decoder decoder;

        private SaveStream(Namespace namespace, long bodyBytesMax, long payloadBytesMax) {
            this.namespace = namespace;
            this.batch = tiers.beginSave();
            this.decoder = new BlockFraming.Decoder(bodyBytesMax, payloadBytesMax, this);
        }

        /** Feeds a body chunk (consumed); a refusal is an {@link ApiException}, and the caller aborts. */
        void feed(ByteBuf chunk) {
            decoder.feed(chunk);
        }

        /** Frees whatever this save reserved; nothing of it is stored. Idempotent, a no-op after the commit. */
        void abort() {
            batch.abort();
        }

        @Override
        public void begin(int index, byte[] key, long payloadBytes) {
            SaveOutcome.Refused refused = batch.reserve(new StateKey(namespace, key), payloadBytes);
            if (refused != null) {
                throw new ApiException(refusalCode(refused), "record " + index + " (key "
                        + HexFormat.of().formatHex(key) + "): " + refused.message() + "; nothing of this save is stored");
            }
        }

        @Override
        public void payload(ByteBuffer bytes) {
            try {
                batch.write(bytes);
            } catch (IllegalStateException closed) { // the tier closed under a running save (shutdown)
                throw new ApiException(ApiError.SHUTTING_DOWN, "the DRAM tier closed during the save");
            }
        }

        @Override
        public void end() {
            // the reservation is full; the batch checks it at the next reserve and at the commit
        }
    }

    /** Starts a streamed save into {@code namespace} with the body and payload bounds of the request. */
    SaveStream beginSave(Namespace namespace, long bodyBytesMax, long payloadBytesMax) {
        return new SaveStream(namespace, bodyBytesMax, payloadBytesMax);
    }

    /**
     * {@code POST /cache/save}, once the body ended: a body that is empty, ends inside a record or was
     * refused stores nothing; otherwise every record becomes resident at once (all or none, issue 20 item 3).
     * Every record was validated (bounds, duplicates) before it was reserved.
     */
    ApiResponse save(SaveStream stream) {
        try {
            stream.decoder.finish();
            return switch (stream.batch.commit()) {
                case SaveBatch.Outcome.Stored s -> {
                    List<byte[]> keys = stream.decoder.keys();
                    List<ApiModel.SavedBlock> saved = new ArrayList<>(keys.size());
                    for (int i = 0; i < keys.size(); i++) {
                        SaveOutcome.Stored st = s.records().get(i);
                        saved.add(new ApiModel.SavedBlock(HexFormat.of().formatHex(keys.get(i)), st.medium().name(),
                                st.sequence(), st.sizeBytes()));
                    }
                    yield json(200, new ApiModel.SaveResponse(text(stream.namespace), saved, tiers.headSequence(), List.of()));
                }
                case SaveBatch.Outcome.Refused r -> throw new ApiException(refusalCode(r.refusal()),
                        r.refusal().message() + "; nothing of this save is stored");
            };
        } finally {
            stream.abort(); // a no-op after a commit
        }
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
     * {@code POST /cache/restore}: the recoverable prefix from local tiers, in request order. Each block is
     * read through the one pin contract ({@link orbitkv.transfer.PayloadSource}): DRAM first, then SSD, each
     * pin naming the exact generation just read from the residence, each copy verified against the block's
     * CRC32C. A broken copy (checksum mismatch, missing or truncated file) was evicted and counted by the
     * tier; the restore tries the other medium, and if none serves, stops there with
     * {@code stop=corrupt-dram|corrupt-ssd;corrupt=<reason>} (a named miss, never a 500, never wrong bytes).
     * The prefix also stops at the first key that is not local (peer transfer is not wired yet), at a
     * refused pin, at the deadline, or before the response would exceed its byte bound. One pin is held at
     * a time, released after its bytes are copied.
     */
    ApiResponse restore(byte[] body, ByteBufAllocator alloc) {
        JsonRequests.RestoreRequest req = JsonRequests.restore(body);
        long deadlineNs = System.nanoTime() + req.deadlineMs() * 1_000_000L;
        BudgetedBody out = new BudgetedBody(alloc, Math.max(2, req.keys().size()), tiers.copyOut());
        int[] served = new int[Medium.values().length];
        Miss stop = null;
        long total = 0;
        try {
            for (StateKey key : req.keys()) {
                if (System.nanoTime() - deadlineNs > 0) {
                    stop = new Miss("deadline", null);
                    break;
                }
                RestoredBlock got = restoreOne(req.namespace(), key, alloc, restoreBodyBytesMax - total, out);
                if (got.miss() != null) {
                    stop = got.miss();
                    break;
                }
                out.addComponent(true, got.record());
                total += got.record().readableBytes();
                served[got.medium().ordinal()]++;
            }
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
        String route = "local-dram=" + served[Medium.DRAM.ordinal()] + ";local-ssd=" + served[Medium.SSD.ordinal()]
                + ";stop=" + (stop == null ? "none" : stop.reason()) + (stop != null && stop.corrupt() != null
                        ? ";corrupt=" + stop.corrupt() : "");
        return new ApiResponse(200, BlockFraming.CONTENT_TYPE, out, Map.of(RESTORED_HEADER,
                Integer.toString(served[Medium.DRAM.ordinal()] + served[Medium.SSD.ordinal()]), ROUTE_HEADER, route));
    }

    /**
     * A restore response body whose bytes are charged to the tiers' {@link CopyOutBudget} until Netty frees
     * it (after the response is written, or on any failure): restore responses never hold more direct
     * memory than the budget, however many run at once.
     */
    private static final class BudgetedBody extends CompositeByteBuf {
        private final CopyOutBudget budget;
        private long taken;

        BudgetedBody(ByteBufAllocator alloc, int maxComponents, CopyOutBudget budget) {
            super(alloc, true, maxComponents);
            this.budget = budget;
        }

        boolean take(long bytes) {
            if (!budget.tryTake(bytes)) {
                return false;
            }
            taken += bytes;
            return true;
        }

        void giveBack(long bytes) {
            budget.release(bytes);
            taken -= bytes;
        }

        @Override
        protected void deallocate() {
            try {
                super.deallocate();
            } finally {
                budget.release(taken);
                taken = 0;
            }
        }
    }

    /** Why a restore prefix stopped: the route header's {@code stop} and, for a broken block, {@code corrupt}. */
    private record Miss(String reason, String corrupt) {}

    /** One key's outcome: a framed record read from {@code medium}, or the miss that stops the prefix. */
    private record RestoredBlock(ByteBuf record, Medium medium, Miss miss) {
        static RestoredBlock missed(String reason, String corrupt) {
            return new RestoredBlock(null, null, new Miss(reason, corrupt));
        }
    }

    /**
     * Reads {@code key} from its local residences, DRAM first. A residence replaced between the read and the
     * pin is pinned once more at its current generation; an evicted one is skipped.
     */
    private RestoredBlock restoreOne(Namespace namespace, StateKey key, ByteBufAllocator alloc, long roomBytes,
                                     BudgetedBody body) {
        List<Residence> residences = tiers.residences(key);
        Miss failure = null;
        for (Residence r : residences) {
            PinResult p = tiers.pin(key, r.medium(), r.sequence());
            if (p instanceof PinResult.StaleGeneration stale) {
                p = tiers.pin(key, r.medium(), stale.currentSequence());
            }
            switch (p) {
                case PinResult.Pinned pin -> {
                    try (pin) {
                        long record = BlockFraming.RECORD_HEADER_BYTES + key.key().length + pin.sizeBytes();
                        if (record > roomBytes) {
                            return RestoredBlock.missed("response-bound", null);
                        }
                        if (!body.take(record)) {
                            return RestoredBlock.missed("response-memory", null);
                        }
                        ByteBuf rec = alloc.directBuffer((int) record);
                        BlockFraming.writeHeader(rec, key.key(), pin.sizeBytes());
                        ByteBuffer dst = rec.nioBuffer(rec.writerIndex(), (int) pin.sizeBytes());
                        switch (pin.copyTo(dst)) {
                            case CopyOutcome.Copied c -> {
                                rec.writerIndex(rec.writerIndex() + (int) pin.sizeBytes());
                                return new RestoredBlock(rec, r.medium(), null);
                            }
                            case CopyOutcome.Corrupt c -> {
                                rec.release(); // never exposed: its content is undefined
                                body.giveBack(record);
                                LOG.warn("restore: stored block broken and evicted ({}): {}", c.reason(), c.detail());
                                failure = new Miss("corrupt-" + r.medium().name().toLowerCase(Locale.ROOT), c.reason());
                            }
                        }
                    }
                }
                case PinResult.PinLimit limit -> failure = failure != null ? failure : new Miss("pins-exhausted", null);
                case PinResult.Closed closed -> failure = failure != null ? failure : new Miss("closed", null);
                case PinResult.NotResident gone -> { } // evicted since it was listed
                case PinResult.StaleGeneration again -> { } // replaced twice meanwhile: a later restore sees it
            }
        }
        if (failure != null) {
            return new RestoredBlock(null, null, failure);
        }
        return RestoredBlock.missed(heldByPeer(namespace, key) ? PEER_TRANSFER_UNAVAILABLE : "not-local", null);
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
        String status = metadata.healthStatus();
        // A fenced Manager answers 503, so probes that read only the status code route around it (issue 20
        // item 6); "degraded" stays 200: local service is whole and the body says what is missing.
        return json("fenced".equals(status) ? 503 : 200, new ApiModel.HealthResponse(status, metadata.mode(), list));
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
