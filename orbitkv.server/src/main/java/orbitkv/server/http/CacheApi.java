package orbitkv.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Locale;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import orbitkv.server.incarnation.DistributedMetadata;
import orbitkv.server.incarnation.IncarnationStatus;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.server.restore.Restoration;
import orbitkv.server.restore.RestoreEvidence;
import orbitkv.server.restore.RestoreRequest;
import orbitkv.server.restore.RestoreResult;
import orbitkv.server.restore.RestoreTransfer;
import orbitkv.server.restore.RouteHeader;
import orbitkv.server.restore.StreamedRestore;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SaveBatch;
import orbitkv.server.tier.Residence;
import orbitkv.server.tier.SaveOutcome;
import orbitkv.server.tier.TierUsage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import orbitkv.server.api.ApiError;
import orbitkv.server.api.ApiException;
import orbitkv.server.api.BlockFraming;
import orbitkv.server.api.AdmissionView;
import orbitkv.server.api.ApiModel;
import orbitkv.server.api.CacheLimits;
import orbitkv.server.api.PrefixQueryResponse;
import orbitkv.server.api.JsonRequests;
import orbitkv.server.api.ResidenceCursor;

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
    /** The recovery planner's bounded trace of one restore (ROUTE-3; at most 512 bytes). */
    static final String ROUTE_TRACE_HEADER = "X-OrbitKV-Route-Trace";
    /** Marks a streamed restore answer: records, then the end record (issue 35 item 4). */
    static final String STREAM_HEADER = "X-OrbitKV-Stream";
    /** Replicas per medium in a candidate list (IDX-9). */
    static final int REPLICAS_PER_MEDIUM_MAX = 4;

    private static final ObjectMapper JSON = JsonRequests.newMapper()
            .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);

    private final LocalTiers tiers;
    private final DistributedMetadata metadata;
    private final ApiMetrics metrics;
    private final long restoreBodyBytesMax;
    private final long syncWaitMs;
    private final RouteSelection routes;
    private final orbitkv.server.restore.Speculation speculation;

    /**
     * @param restoreBodyBytesMax bound on one restore response body (the prefix stops before exceeding it)
     * @param syncWaitMs bound on waiting for submitted saves in /cache/sync
     */
    CacheApi(LocalTiers tiers, DistributedMetadata metadata, ApiMetrics metrics, long restoreBodyBytesMax, long syncWaitMs,
             RouteSelection routes, orbitkv.server.restore.Speculation speculation) {
        this.routes = Objects.requireNonNull(routes, "routes");
        this.speculation = Objects.requireNonNull(speculation, "speculation"); // issue 40
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
            } catch (orbitkv.server.tier.TierWriteFailed failed) { // issue 33: the tmpfs could not back the bytes
                throw new ApiException(refusalCode(failed.refusal()), failed.refusal().message()
                        + "; nothing of this save is stored");
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

    /**
     * {@code POST /cache/query}: local candidates plus the index's remote ones, coverage, and the demand-aware
     * recoverable prefix (IDX-14): the longest prefix legal routes can complete, planned by the recovery planner on
     * the same evidence a restore would use, and why it stops ({@code prefix_stop}).
     */
    ApiResponse query(byte[] body) {
        JsonRequests.KeysRequest req = JsonRequests.query(body);
        DistributedMetadata.Lookup lookup = metadata.lookup(req.namespace(), req.keys());
        IncarnationStatus.Owner self = metadata.self();
        List<ApiModel.Candidate> candidates = new ArrayList<>(req.keys().size());
        for (int i = 0; i < req.keys().size(); i++) {
            StateKey key = req.keys().get(i);
            List<ApiModel.Replica> replicas = new ArrayList<>();
            for (Residence r : tiers.residences(key)) {
                replicas.add(new ApiModel.Replica(self, r.medium().name(), r.sequence(), r.sizeBytes(), true, false));
            }
            for (orbitkv.index.Replica r : lookup.replicas().get(i)) {
                replicas.add(new ApiModel.Replica(IncarnationStatus.Owner.of(r.owner()), r.medium().name(), r.sequence(),
                        r.sizeBytes(), false, r.stale()));
            }
            candidates.add(new ApiModel.Candidate(key.keyHex(), replicas, lookup.truncated().get(i)));
        }
        orbitkv.recovery.Plan plan = routes.plan(orbitkv.recovery.Demand.hostReady(req.namespace(), req.keys(),
                System.nanoTime() + JsonRequests.DEADLINE_MS_DEFAULT * 1_000_000L),
                RestoreEvidence.of(tiers, req.keys(), MetadataRestoreView.evidence(lookup),
                        metadata.transfer().map(RestoreTransfer::of)));
        if (req.prefixOnly()) { // the lean answer (issue 35, G5): same lookup, same plan, no replica lists
            List<Boolean> present = new ArrayList<>(candidates.size());
            for (ApiModel.Candidate c : candidates) {
                present.add(c.replicas().stream().anyMatch(r -> !r.stale()));
            }
            return json(200, new PrefixQueryResponse(lookup.coverage().name(), lookup.viewGeneration(), plan.prefixKeys(),
                    plan.stop().traceName(), present));
        }
        return json(200, new ApiModel.QueryResponse(lookup.coverage().name(), lookup.viewGeneration(), plan.prefixKeys(),
                plan.stop().traceName(), candidates));
    }

    /** {@code GET /cache/metadata/routes}: retained restore route traces, newest first, paginated by trace id. */
    ApiResponse routeTraces(int limit, java.util.OptionalLong beforeId) {
        orbitkv.recovery.TracePage page = routes.traces(limit, beforeId);
        List<ApiModel.RouteTraceView> traces = new ArrayList<>(page.traces().size());
        for (orbitkv.recovery.RouteTrace t : page.traces()) {
            traces.add(new ApiModel.RouteTraceView(t.id(), t.header(), t.demandKeys(), t.restoredKeys(),
                    t.stop().traceName(), t.plannedPrefixKeys(), t.plannedStop().traceName(),
                    t.decision().mode().name().toLowerCase(java.util.Locale.ROOT), t.decision().reason().traceName(),
                    t.replans().stream().map(orbitkv.recovery.AdmissionRefusal::traceName).toList(), t.readyNanos(),
                    t.drainPending(), t.loadAgeNanos().isPresent() ? t.loadAgeNanos().getAsLong() : null));
        }
        return json(200, new ApiModel.RouteTracesResponse(traces,
                page.nextBeforeId().isPresent() ? Long.toString(page.nextBeforeId().getAsLong()) : null));
    }

    /**
     * {@code GET /cache/metadata/residences}: one page of this Manager's current residences (its InventorySource's
     * resident map), in resident-map order, optionally of one namespace, with the head sequence it is consistent
     * with. Standalone or distributed alike: the listing is local.
     */
    ApiResponse residences(ResidencesRequest req) {
        orbitkv.inventory.InventorySource source = tiers.inventory().orElseThrow(() -> new ApiException(
                ApiError.METADATA_UNAVAILABLE, "this Manager keeps no source inventory to list"));
        orbitkv.inventory.ResidencePage page = source.residences(req.namespace(), req.after(), req.limit());
        List<ApiModel.ResidenceView> out = new ArrayList<>(page.residences().size());
        for (orbitkv.inventory.ResidenceRecord r : page.residences()) {
            out.add(new ApiModel.ResidenceView(new String(r.key().namespace().bytes(), java.nio.charset.StandardCharsets.UTF_8),
                    r.key().keyHex(), r.medium().name(), r.sequence(), r.sizeBytes()));
        }
        return json(200, new ApiModel.ResidencesResponse(page.headSequence(),
                req.namespace().map(n -> new String(n.bytes(), java.nio.charset.StandardCharsets.UTF_8)).orElse(null), out,
                page.next().map(ResidenceCursor::encode).orElse(null)));
    }

    /**
     * {@code POST /cache/restore}: the recoverable prefix in request order, planned and executed by the recovery
     * planner ({@link Restoration}): the fixed order local DRAM, local SSD, peer DRAM, peer SSD unless executed
     * observations earn a switch; peer blocks are authorized by their source and READ into the response's own
     * records. Every block is verified against the CRC32C computed at save time; a block no route can serve ends the
     * prefix with a named stop in {@code X-OrbitKV-Route} (never a 500, never wrong bytes).
     */
    ApiResponse restore(byte[] body, ByteBufAllocator alloc) {
        RestoreRequest req = JsonRequests.restore(body);
        if (req.stream()) {
            return streamedRestore(req, alloc);
        }
        return restoreResponse(new Restoration(tiers, new MetadataRestoreView(metadata), routes, restoreBodyBytesMax,
                alloc, req).with(speculation).run(), alloc);
    }

    /**
     * A restore's answer: its delivered records as one body charged to the restore memory budget until Netty frees
     * it, {@code X-OrbitKV-Restored}, the route header and the planner's trace.
     */
    private ApiResponse restoreResponse(RestoreResult r, ByteBufAllocator alloc) {
        RestoreBody body = new RestoreBody(alloc, Math.max(2, r.restoredKeys()), tiers.copyOut());
        for (RestoreResult.DeliveredRoute d : r.delivered()) {
            body.adopt(d.chargedBytes()); // from now on the body returns these bytes to the budget when freed
            for (ByteBuf rec : d.records()) {
                body.addComponent(true, rec);
            }
            for (RouteHeader.Served s : d.served()) {
                metrics.restored(s.kind(), s.backend(), s.payloadBytes());
            }
        }
        return new ApiResponse(200, BlockFraming.CONTENT_TYPE, body, Map.of(RESTORED_HEADER,
                Integer.toString(r.restoredKeys()), ROUTE_HEADER, r.routeHeader(), ROUTE_TRACE_HEADER, r.trace()));
    }

    /**
     * {@code POST /cache/restore} with {@code "stream": true} (issue 35 item 4): the same verified prefix, each record
     * written as soon as it is delivered, then the end record ({@link StreamedRestore}); {@code X-OrbitKV-Stream: 1}
     * tells the client to read the end record instead of the route headers.
     */
    private ApiResponse streamedRestore(RestoreRequest req, ByteBufAllocator alloc) {
        StreamedRestore restore = new StreamedRestore(tiers, new MetadataRestoreView(metadata), routes,
                restoreBodyBytesMax, alloc, req).with(speculation);
        return ApiResponse.streamed(BlockFraming.CONTENT_TYPE, Map.of(STREAM_HEADER, "1"), sink -> {
            StreamedRestore.Outcome o = restore.run(sink);
            for (RouteHeader.Served s : o.served()) {
                metrics.restored(s.kind(), s.backend(), s.payloadBytes());
            }
            return o.ended();
        });
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
        orbitkv.server.tier.SsdTier.WritesAwaited waited = tiers.syncSubmittedSaves(syncWaitMs);
        if (!waited.completed()) {
            throw new ApiException(ApiError.AWAIT_TIMEOUT, "submitted saves were not resident within " + syncWaitMs + " ms");
        }
        if (waited.failed() > 0) { // issue 33: never 200 for SSD copies that were not written
            throw new ApiException(ApiError.SSD_WRITE_FAILED, waited.failed() + " SSD write(s) of the saves this sync"
                    + " covers failed" + (waited.lastFailure() == null ? "" : " (last: " + waited.lastFailure() + ")")
                    + "; those blocks are resident in DRAM only; /health shows the SSD tier degraded");
        }
        return metadata.fence()
                .<ApiResponse>map(f -> json(200, new ApiModel.SyncFenceResponse(f)))
                .orElseGet(() -> json(200, new ApiModel.SyncStandaloneResponse(true)));
    }

    /** {@code POST /cache/metadata/await} (API-4): parsing here, the wait in {@link DistributedMetadata}. */
    ApiResponse await(byte[] body, long timeoutMsMax) throws InterruptedException {
        return json(200, metadata.await(JsonRequests.await(body, timeoutMsMax)));
    }

    /** {@code POST /cache/scope} (IDX-6, issue 40): 202 with the generation that will serve the scope. */
    ApiResponse changeScope(byte[] body) {
        JsonRequests.ScopeRequest r = JsonRequests.scope(body);
        IncarnationStatus.ScopeChange change = metadata.changeScope(r.scope(), r.timeoutMs());
        return json("current".equals(change.state()) ? 200 : 202, change);
    }

    /** {@code GET /cache/metadata/status} (DIAG-1). */
    ApiResponse status(int ownersLimit, String pageToken) {
        return json(200, new ApiModel.StatusWithTiers(metadata.status(ownersLimit, pageToken, tiers.headSequence()), tierHealth(),
                tiers.admission().map(AdmissionView::of).orElse(null),
                orbitkv.server.api.SpeculationView.of(speculation.figures())));
    }

    /**
     * {@code POST /cache/prefetch} (issue 40, ROUTE-13): a declared demand queued for bounded speculative fetches
     * ({@link orbitkv.server.restore.Prefetcher}); answered at once with what happened to each key.
     */
    ApiResponse prefetch(byte[] body) {
        orbitkv.server.restore.PrefetchRequest req = JsonRequests.prefetch(body);
        var outcomes = speculation.prefetch(req, new MetadataRestoreView(metadata));
        return json(200, orbitkv.server.api.SpeculationView.PrefetchAnswer.of(outcomes, speculation.figures()));
    }

    ApiResponse health() {
        List<ApiModel.TierHealth> list = tierHealth();
        String status = metadata.healthStatus();
        // issue 33: a tier whose storage fails writes degrades the Manager (local service is partly lost)
        List<String> reasons = list.stream().filter(t -> t.fault() != null)
                .map(t -> t.medium() + " tier " + t.fault().reason() + ": " + t.fault().message()).toList();
        if ("ok".equals(status) && !reasons.isEmpty()) {
            status = "degraded";
        }
        // A fenced Manager answers 503, so probes that read only the status code route around it (issue 20
        // item 6); "degraded" stays 200: local service is whole and the body says what is missing.
        return json("fenced".equals(status) ? 503 : 200, new ApiModel.HealthResponse(status, metadata.mode(), list, reasons,
                metadata.sourceSessionsRefusedMembers()));
    }

    private List<ApiModel.TierHealth> tierHealth() {
        List<ApiModel.TierHealth> list = new ArrayList<>(2);
        list.add(tierHealth(tiers.dram().usage(), tiers.dram().faults()));
        if (tiers.ssd() != null) {
            list.add(tierHealth(tiers.ssd().usage(), tiers.ssd().faults()));
        }
        return list;
    }

    /** {@code GET /cache/limits} (issue 35, G2): the running bounds a client must respect. */
    /** issue 39: the engine submitter API of the node-local admission window ({@link AdmissionApi}). */
    ApiResponse admission(ApiEndpoint endpoint, byte[] body) throws InterruptedException {
        return AdmissionApi.call(endpoint, tiers.admission(), body);
    }

    ApiResponse limits(HttpLimits limits) {
        return json(200, CacheLimits.of(limits.blockBytesMax(), limits.saveBodyBytesMax(), limits.jsonBodyBytesMax(),
                tiers.copyOut().bytesMax(), limits.token().isPresent(), limits.readToken().isPresent()));
    }

    ApiResponse metrics() {
        return new ApiResponse(200, ApiMetrics.CONTENT_TYPE, Unpooled.wrappedBuffer(metrics.scrape()), Map.of());
    }

    static ApiResponse error(ApiException e) {
        ApiResponse r = json(e.error().status(), new ApiModel.ErrorResponse(new ApiModel.ErrorBody(e.error().name(), e.getMessage())));
        return e.headers().isEmpty() ? r : new ApiResponse(r.status(), r.contentType(), r.body(), e.headers());
    }

    private static ApiModel.TierHealth tierHealth(TierUsage u, orbitkv.server.tier.TierFaults faults) {
        long now = System.nanoTime();
        ApiModel.TierFault fault = faults.current().map(f -> new ApiModel.TierFault(f.reason().name(), f.message(),
                f.faultsSinceOk(), (now - f.sinceNanos()) / 1_000_000, (now - f.lastNanos()) / 1_000_000)).orElse(null);
        return new ApiModel.TierHealth(u.medium().name(), u.blocks(), u.residentBytes(), u.capacityBytes(),
                fault == null ? "ok" : "degraded", fault, faults.faultsTotal());
    }

    private static ApiError refusalCode(SaveOutcome.Refused r) {
        return switch (r.reason()) {
            case BLOCK_EXCEEDS_TIER -> ApiError.BLOCK_EXCEEDS_TIER;
            case PINS_EXHAUSTED -> ApiError.TIER_PINS_EXHAUSTED;
            case CLOSED -> ApiError.SHUTTING_DOWN;
            case BACKING_STORE_FULL -> ApiError.TIER_BACKING_STORE_FULL;
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
