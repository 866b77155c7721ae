package orbitkv.transfer.requester;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import orbitkv.transfer.AuthorizeOutcome.AuthorizeFailure;
import orbitkv.transfer.Backend;
import orbitkv.transfer.LatencyHistogram;
import orbitkv.transfer.ReadFailure;
import orbitkv.transfer.ReadRefusal;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.PeerRouteClass;
import orbitkv.transfer.RouteStatus;
import orbitkv.transfer.SharedMemoryFallback;
import orbitkv.transfer.frame.EnumCounter;

/** The engine's counters, one per closed label (DIAG-2: no per-block, request or incarnation labels). */
final class EngineCounters {
    private final RouteCounter[] routes = new RouteCounter[Backend.values().length * PeerRouteClass.values().length];
    final AtomicLong readsAdmitted = new AtomicLong();
    final AtomicLong readsTerminated = new AtomicLong();
    final EnumCounter<ReadRefusal> readRefusals = new EnumCounter<>(ReadRefusal.class);
    final EnumCounter<ReadFailure> readFailures = new EnumCounter<>(ReadFailure.class);
    final AtomicLong timedOut = new AtomicLong();
    final AtomicLong cancelled = new AtomicLong();
    final EnumCounter<SharedMemoryFallback> fallbacks = new EnumCounter<>(SharedMemoryFallback.class);
    final AtomicLong authorizeGranted = new AtomicLong();
    final AtomicLong authorizeNothingGranted = new AtomicLong();
    final EnumCounter<RefusalReason> authorizeRefusals = new EnumCounter<>(RefusalReason.class);
    final EnumCounter<AuthorizeFailure> authorizeFailures = new EnumCounter<>(AuthorizeFailure.class);
    final AtomicLong releasesConfirmed = new AtomicLong();
    final AtomicLong releasesNotConfirmed = new AtomicLong();
    final AtomicLong releasesFolded = new AtomicLong();
    /** Authorize answers that came on the data channel (issue 37 item 5). */
    final AtomicLong authorizesOnDataChannel = new AtomicLong();
    /** Authorizes asked on the data channel and then asked over gRPC (no answer there, or a source without the frame). */
    final AtomicLong dataChannelAuthorizeFallbacks = new AtomicLong();
    /** Well-formed load summaries delivered with an Authorize outcome (ROUTE-9). */
    final AtomicLong loadSummariesReceived = new AtomicLong();
    /** Load summaries dropped as malformed (wrong node, window or widths); the outcome itself stands. */
    final AtomicLong loadSummariesRejected = new AtomicLong();

    EngineCounters() {
        for (int i = 0; i < routes.length; i++) {
            routes[i] = new RouteCounter();
        }
    }

    void completed(Backend backend, PeerRouteClass route, long bytes, long latencyNanos) {
        RouteCounter c = routes[backend.ordinal() * PeerRouteClass.values().length + route.ordinal()];
        c.reads.incrementAndGet();
        c.bytes.addAndGet(bytes);
        c.buckets.incrementAndGet(LatencyHistogram.bucketOf(latencyNanos));
        c.count.incrementAndGet();
        c.sumNanos.addAndGet(latencyNanos);
    }

    List<RouteStatus> routes() {
        List<RouteStatus> out = new ArrayList<>(routes.length);
        for (Backend b : Backend.values()) {
            for (PeerRouteClass r : PeerRouteClass.values()) {
                RouteCounter c = routes[b.ordinal() * PeerRouteClass.values().length + r.ordinal()];
                long[] counts = new long[c.buckets.length()];
                for (int i = 0; i < counts.length; i++) {
                    counts[i] = c.buckets.get(i);
                }
                out.add(new RouteStatus(b, r, c.reads.get(), c.bytes.get(),
                        new LatencyHistogram(counts, c.count.get(), c.sumNanos.get())));
            }
        }
        return out;
    }

    private static final class RouteCounter {
        final AtomicLong reads = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLongArray buckets = new AtomicLongArray(LatencyHistogram.FINITE_BUCKETS + 1);
        final AtomicLong count = new AtomicLong();
        final AtomicLong sumNanos = new AtomicLong();
    }
}
