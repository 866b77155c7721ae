package orbitkv.server.http;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.function.Function;
import orbitkv.server.tier.CorruptionReason;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.SsdTier;
import orbitkv.server.tier.TierCounters;
import orbitkv.server.tier.TierRefusal;
import orbitkv.server.tier.TierUsage;

/**
 * The Manager's Prometheus metrics (DIAG-2, DIAG-3). Labels are bounded enumerations only: endpoint,
 * status class, error code, medium, refusal reason. Never a per-block, per-request, namespace or incarnation
 * label (DIAG-2). Tier figures are read by callbacks at scrape time.
 */
final class ApiMetrics {
    static final String CONTENT_TYPE = PrometheusTextFormatWriter.CONTENT_TYPE;

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
    private final Counter requests;
    private final Counter errors;
    private final Counter connectionsOpened;
    private final Counter connectionsClosed;
    private final Counter lingeredBytes;
    private final Counter restoredBlocks;
    private final Counter restoredBytes;

    ApiMetrics(LocalTiers tiers, HttpAdmission admission) {
        requests = Counter.builder().name("orbitkv_http_requests").help("HTTP requests answered, by endpoint and status class")
                .labelNames("endpoint", "status_class").register(registry);
        errors = Counter.builder().name("orbitkv_http_errors").help("HTTP error answers by stable error code")
                .labelNames("code").register(registry);
        connectionsOpened = Counter.builder().name("orbitkv_http_connections_opened").help("HTTP connections accepted")
                .register(registry);
        connectionsClosed = Counter.builder().name("orbitkv_http_connections_closed")
                .help("HTTP connections closed, by cause (client, answered_close, refused, header_timeout, body_timeout,"
                        + " idle_timeout, linger_timeout, linger_bytes, write_failed, io_error, shutdown)")
                .labelNames("cause").register(registry);
        lingeredBytes = Counter.builder().name("orbitkv_http_lingered_bytes")
                .help("request bytes read and discarded after an early refusal").register(registry);
        restoredBlocks = Counter.builder().name("orbitkv_restore_blocks")
                .help("blocks delivered by /cache/restore, by route class (local_dram, local_ssd, peer_dram, peer_ssd)"
                        + " and backend (local, tcp, shared_memory)")
                .labelNames("route", "backend").register(registry);
        restoredBytes = Counter.builder().name("orbitkv_restore_bytes")
                .help("payload bytes delivered by /cache/restore, by route class and backend")
                .labelNames("route", "backend").register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_requests_in_flight").help("request slots taken")
                .callback(cb -> cb.call(admission.requestsInFlight())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_body_bytes_in_flight")
                .help("request body bytes admitted (reserved) across connections")
                .callback(cb -> cb.call(admission.bodyBytes().used())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_body_bytes_in_flight_peak")
                .help("high-water mark of admitted request body bytes")
                .callback(cb -> cb.call(admission.bodyBytes().peak())).register(registry);
        GaugeWithCallback.builder().name("orbitkv_http_body_bytes_in_flight_max")
                .help("--http-body-bytes-in-flight-max")
                .callback(cb -> cb.call(admission.bodyBytes().max())).register(registry);
        tierGauge(tiers, "orbitkv_tier_blocks", "resident blocks", u -> (double) u.blocks());
        tierGauge(tiers, "orbitkv_tier_resident_bytes", "payload bytes of resident blocks", u -> (double) u.residentBytes());
        tierGauge(tiers, "orbitkv_tier_capacity_bytes", "tier bound in bytes", u -> (double) u.capacityBytes());
        tierGauge(tiers, "orbitkv_tier_allocated_bytes", "bytes taken incl. alignment and pinned retired blocks",
                u -> (double) u.allocatedBytes());
        tierGauge(tiers, "orbitkv_tier_pins_held", "pins currently held", u -> (double) u.pinsHeld());
        tierCounter(tiers, "orbitkv_tier_stored", "blocks stored", TierCounters::storedTotal);
        tierCounter(tiers, "orbitkv_tier_evicted", "blocks evicted by LRU to make room", TierCounters::evictedTotal);
        tierCounter(tiers, "orbitkv_tier_reads", "blocks pinned for reading", TierCounters::readsTotal);
        tierGauge(tiers, "orbitkv_tier_pinned_bytes", "payload bytes currently pinned", u -> (double) u.pinnedBytes());
        tierGauge(tiers, "orbitkv_tier_reserved_bytes", "bytes reserved by saves in progress (not yet visible)",
                u -> (double) u.reservedBytes());
        tierCounter(tiers, "orbitkv_tier_evicted_pinned", "explicit evicts of pinned residences (bytes kept until the last unpin)",
                TierCounters::evictedPinnedTotal);
        tierCounter(tiers, "orbitkv_tier_pinned_skipped_by_lru", "pinned residences passed over by LRU eviction",
                TierCounters::pinnedSkippedByLruTotal);
        tierCounter(tiers, "orbitkv_tier_reservations_aborted", "save reservations freed without being stored",
                TierCounters::reservationsAbortedTotal);
        CounterWithCallback.builder().name("orbitkv_tier_corrupt")
                .help("stored blocks found broken on a read (checksum, missing or truncated file); each was evicted")
                .labelNames("medium", "reason").callback(cb -> {
                    for (CorruptionReason r : CorruptionReason.values()) {
                        cb.call(tiers.dram().counters().corruptTotal(r), "DRAM", r.wireName());
                        if (tiers.ssd() != null) {
                            cb.call(tiers.ssd().counters().corruptTotal(r), "SSD", r.wireName());
                        }
                    }
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_tier_refused").help("tier refusals by reason (never silent loss)")
                .labelNames("medium", "reason").callback(cb -> {
                    for (TierRefusal r : TierRefusal.values()) {
                        cb.call(tiers.dram().counters().refusedTotal(r), "DRAM", r.name());
                        if (tiers.ssd() != null) {
                            cb.call(tiers.ssd().counters().refusedTotal(r), "SSD", r.name());
                        }
                    }
                }).register(registry);
        // issue 33: tier storage faults (the refusals themselves are in orbitkv_tier_refused_total)
        GaugeWithCallback.builder().name("orbitkv_tier_degraded")
                .help("1 while the tier's storage failed its last write (full tmpfs or disk, I/O error), else 0")
                .labelNames("medium").callback(cb -> {
                    cb.call(tiers.dram().faults().current().isPresent() ? 1 : 0, "DRAM");
                    if (tiers.ssd() != null) {
                        cb.call(tiers.ssd().faults().current().isPresent() ? 1 : 0, "SSD");
                    }
                }).register(registry);
        CounterWithCallback.builder().name("orbitkv_tier_write_faults")
                .help("writes the tier's storage failed (full tmpfs or disk, I/O error)")
                .labelNames("medium").callback(cb -> {
                    cb.call(tiers.dram().faults().faultsTotal(), "DRAM");
                    if (tiers.ssd() != null) {
                        cb.call(tiers.ssd().faults().faultsTotal(), "SSD");
                    }
                }).register(registry);
        SsdTier ssd = tiers.ssd();
        if (ssd != null) {
            GaugeWithCallback.builder().name("orbitkv_ssd_queue_writes").help("queued SSD writes")
                    .callback(cb -> cb.call(ssd.queueDepth()[0])).register(registry);
            GaugeWithCallback.builder().name("orbitkv_ssd_queue_bytes").help("queued SSD write bytes")
                    .callback(cb -> cb.call(ssd.queueDepth()[1])).register(registry);
            CounterWithCallback.builder().name("orbitkv_ssd_superseded_writes")
                    .help("queued SSD writes discarded because a newer save or an evict superseded them")
                    .callback(cb -> cb.call(ssd.supersededWrites())).register(registry);
        }
        GaugeWithCallback.builder().name("orbitkv_restore_response_bytes")
                .help("restore response bytes held (restore arena or direct memory), bounded by --restore-bytes-in-flight-max")
                .callback(cb -> cb.call(tiers.copyOut().heldBytes())).register(registry);
        CounterWithCallback.builder().name("orbitkv_restore_response_memory_refusals")
                .help("restores that stopped their prefix because --restore-bytes-in-flight-max was reached")
                .callback(cb -> cb.call(tiers.copyOut().refusalsTotal())).register(registry);
        tiers.restoreArena().ifPresent(arena -> {
            GaugeWithCallback.builder().name("orbitkv_restore_arena_held_bytes")
                    .help("restore arena bytes held by records not yet written (the arena is --restore-bytes-in-flight-max of tmpfs)")
                    .callback(cb -> cb.call(arena.heldBytes())).register(registry);
            GaugeWithCallback.builder().name("orbitkv_restore_arena_high_water_bytes")
                    .help("most restore arena bytes held at once: the arena pages touched so far")
                    .callback(cb -> cb.call(arena.highWaterBytes())).register(registry);
            CounterWithCallback.builder().name("orbitkv_restore_arena_fallbacks")
                    .help("restore records the arena could not place (fragmented free space); they used direct memory")
                    .callback(cb -> cb.call(arena.fallbacksTotal())).register(registry);
        });
        GaugeWithCallback.builder().name("orbitkv_inventory_head_sequence").help("latest residency sequence")
                .callback(cb -> cb.call(tiers.headSequence())).register(registry);
    }

    /** The registry, for the distributed metadata's figures (inventory, index, membership). */
    PrometheusRegistry registry() {
        return registry;
    }

    void answered(String endpoint, int status) {
        requests.labelValues(endpoint, (status / 100) + "xx").inc();
    }

    void error(ApiError code) {
        errors.labelValues(code.name()).inc();
    }

    void connectionOpened() {
        connectionsOpened.inc();
    }

    void connectionClosed(String cause) {
        connectionsClosed.labelValues(cause).inc();
    }

    /** One delivered restore block: {@code kind} is local-dram, local-ssd, peer-dram or peer-ssd; backend null = local. */
    void restored(String kind, orbitkv.transfer.Backend backend, long bytes) {
        String route = kind.replace('-', '_');
        String b = backend == null ? "local" : backend == orbitkv.transfer.Backend.TCP ? "tcp" : "shared_memory";
        restoredBlocks.labelValues(route, b).inc();
        restoredBytes.labelValues(route, b).inc(bytes);
    }

    void lingered(long bytes) {
        lingeredBytes.inc(bytes);
    }

    byte[] scrape() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(16 * 1024);
        try {
            writer.write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private void tierGauge(LocalTiers tiers, String name, String help, Function<TierUsage, Double> value) {
        GaugeWithCallback.builder().name(name).help(help).labelNames("medium").callback(cb -> {
            cb.call(value.apply(tiers.dram().usage()), "DRAM");
            if (tiers.ssd() != null) {
                cb.call(value.apply(tiers.ssd().usage()), "SSD");
            }
        }).register(registry);
    }

    private void tierCounter(LocalTiers tiers, String name, String help, Function<TierCounters, Long> value) {
        CounterWithCallback.builder().name(name).help(help).labelNames("medium").callback(cb -> {
            cb.call(value.apply(tiers.dram().counters()), "DRAM");
            if (tiers.ssd() != null) {
                cb.call(value.apply(tiers.ssd().counters()), "SSD");
            }
        }).register(registry);
    }
}
