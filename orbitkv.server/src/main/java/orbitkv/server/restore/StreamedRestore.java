package orbitkv.server.restore;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import orbitkv.recovery.PrefixStop;
import orbitkv.recovery.RouteSelection;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.tier.LocalTiers;

/**
 * A streamed restore (issue 35 item 4, G7): the same planned, verified restore as {@link Restoration}, run in windows
 * over the remaining keys, each window's records written as soon as they are verified and delivered, followed by one
 * end record. Memory is held per record in flight, not per response: a record keeps its charge to the restore memory
 * budget ({@code --restore-bytes-in-flight-max}) only until it was written, and a window that the budget kept empty
 * waits for this restore's own writes before it is tried again, so a restore larger than the budget completes
 * (BND-1, INV-9: the bound is unchanged, only its holder changes). A record that failed verification was never
 * delivered and is never written (INV-2); a cut connection ends the restore without an end record.
 *
 * <p>The end record is framed like a block record with a zero-length key (which no block key can be) and a JSON payload
 * {@code {"restored": n, "stop": "...", "route": "r=n stop=... routes=..."}} (docs/api.md "Streamed restore").
 */
public final class StreamedRestore {
    /**
     * Recyclers kept for the end records' mapper: one per streamed restore writing its end record at once (a small
     * JSON object); beyond it a released recycler is garbage-collected (a cache bound, nothing is lost).
     */
    static final int END_RECORD_RECYCLERS_MAX = 16;
    /** Buffers recycled across the handlers' virtual threads, as JsonRequests.newMapper() does one floor up. */
    private static final ObjectMapper JSON = new ObjectMapper(com.fasterxml.jackson.core.JsonFactory.builder()
            .recyclerPool(com.fasterxml.jackson.core.util.JsonRecyclerPools.newBoundedPool(END_RECORD_RECYCLERS_MAX))
            .build());

    /** Where a streamed restore's records go, in order. */
    public interface RecordSink {
        /**
         * Writes {@code record}, whose ownership passes to the sink (it is freed written or not), once the connection
         * can take it (writability backpressure). The future completes when the record was written, exceptionally
         * when the connection was cut.
         */
        CompletableFuture<Void> write(ByteBuf record) throws InterruptedException;
    }

    /**
     * How a streamed restore ended.
     *
     * @param ended whether the end record was written (false: the connection was cut or the restore failed)
     */
    public record Outcome(int restoredKeys, String stop, List<RouteHeader.Served> served, boolean ended) {
        public Outcome {
            served = List.copyOf(served);
        }

        public String routeHeader() {
            return RouteHeader.of(served, stop);
        }
    }

    private final LocalTiers tiers;
    private final RestoreView view;
    private final RouteSelection routes;
    private final long bodyBytesMax;
    private final ByteBufAllocator alloc;
    private final RestoreRequest req;
    private final CopyOutBudget budget;
    private final AtomicBoolean cut = new AtomicBoolean();
    private Speculation speculation;
    /** Bytes of this restore's written-or-in-flight records still charged to the budget; guarded by {@code this}. */
    private long ownHeld;

    public StreamedRestore(LocalTiers tiers, RestoreView view, RouteSelection routes, long bodyBytesMax,
            ByteBufAllocator alloc, RestoreRequest req) {
        this.tiers = tiers;
        this.view = view;
        this.routes = routes;
        this.bodyBytesMax = bodyBytesMax;
        this.alloc = alloc;
        this.req = req;
        this.budget = tiers.copyOut();
    }

    /** Every window is demand traffic of {@code s} and reports to it ({@link Restoration#with}). */
    public StreamedRestore with(Speculation s) {
        this.speculation = s;
        return this;
    }

    /** Runs the restore into {@code sink}: its records in request order, then the end record unless cut. */
    public Outcome run(RecordSink sink) throws InterruptedException {
        if (speculation == null) {
            return runWindows(sink);
        }
        speculation.demandBegins(); // the whole streamed restore is demand, its pauses between windows included
        try {
            return runWindows(sink);
        } finally {
            speculation.demandEnds();
        }
    }

    private Outcome runWindows(RecordSink sink) throws InterruptedException {
        long deadlineNanos = System.nanoTime() + req.deadlineMs() * 1_000_000L;
        IndexEvidence index = view.evidence(req.namespace(), req.keys());
        Optional<RestoreTransfer> transfer = view.transfer();
        List<RouteHeader.Served> served = new ArrayList<>(req.keys().size());
        int done = 0;
        String stop = PrefixStop.COMPLETE.traceName();
        while (done < req.keys().size()) {
            RestoreRequest rest = new RestoreRequest(req.namespace(), req.keys().subList(done, req.keys().size()),
                    req.deadlineMs(), req.backend(), false, req.storeLocal());
            long heldBefore = ownHeld();
            RestoreResult r = new Restoration(tiers, index.from(done), transfer, routes, bodyBytesMax, alloc, rest,
                    deadlineNanos).with(speculation).run();
            if (!send(r, sink, served)) {
                return new Outcome(done, "cut", served, false);
            }
            done += r.restoredKeys();
            stop = r.stop();
            if (done == req.keys().size() || !capacity(r.stop())) {
                break;
            }
            if (r.restoredKeys() == 0 && (heldBefore == 0 || !awaitOwnWrites(deadlineNanos))) {
                break; // the budget is held by others (or the deadline passed): the stop the window named
            }
        }
        return new Outcome(done, stop, served, end(sink, done, stop, RouteHeader.of(served, stop), deadlineNanos));
    }

    /** Whether a window stopped only because record memory or the body bound kept the next record out. */
    private static boolean capacity(String stop) {
        return stop.equals("response-memory") || stop.equals(PrefixStop.DESTINATION_CAPACITY.traceName());
    }

    /**
     * Hands a window's records to the sink in order; each route's charge returns when its last record was written
     * (or dropped). False when the connection was cut: the records not handed over are freed here.
     */
    private boolean send(RestoreResult r, RecordSink sink, List<RouteHeader.Served> served) throws InterruptedException {
        List<RestoreResult.DeliveredRoute> routes = r.delivered();
        for (int i = 0; i < routes.size(); i++) {
            RestoreResult.DeliveredRoute d = routes.get(i);
            RouteCharge charge = new RouteCharge(d.chargedBytes(), d.records().size());
            synchronized (this) {
                ownHeld += d.chargedBytes();
            }
            for (int b = 0; b < d.records().size(); b++) {
                if (cut.get()) {
                    freeFrom(d, b, charge);
                    routes.subList(i + 1, routes.size()).forEach(x -> x.release(budget));
                    return false;
                }
                CompletableFuture<Void> written;
                try {
                    written = sink.write(d.records().get(b));
                } catch (InterruptedException | RuntimeException e) {
                    charge.recordEnded(); // the sink owned and freed record b
                    freeFrom(d, b + 1, charge);
                    routes.subList(i + 1, routes.size()).forEach(x -> x.release(budget));
                    throw e;
                }
                served.add(d.served().get(b));
                written.whenComplete((ok, x) -> {
                    if (x != null) {
                        cut.set(true);
                    }
                    charge.recordEnded();
                });
            }
        }
        return !cut.get();
    }

    /** Frees records {@code from..} of a route that will not be written. */
    private void freeFrom(RestoreResult.DeliveredRoute d, int from, RouteCharge charge) {
        for (int b = from; b < d.records().size(); b++) {
            d.records().get(b).release();
            charge.recordEnded();
        }
    }

    private synchronized long ownHeld() {
        return ownHeld;
    }

    /**
     * Waits until this restore's records in flight were written and their memory returned to the budget; false when
     * the connection was cut or the deadline passed first.
     */
    private synchronized boolean awaitOwnWrites(long deadlineNanos) throws InterruptedException {
        while (ownHeld > 0 && !cut.get()) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        return !cut.get();
    }

    private synchronized void returned(long bytes) {
        ownHeld -= bytes;
        notifyAll();
    }

    /** Writes the end record; true once it was written. */
    private boolean end(RecordSink sink, int restored, String stop, String route, long deadlineNanos)
            throws InterruptedException {
        if (cut.get()) {
            return false;
        }
        ByteBuf end = endRecord(alloc, restored, stop, route);
        try {
            sink.write(end).get(Math.max(1, deadlineNanos - System.nanoTime()) + TimeUnit.SECONDS.toNanos(30),
                    TimeUnit.NANOSECONDS);
            return !cut.get();
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
    }

    /** The end record: a zero-length key, then the JSON of the restored count, the stop and the route text. */
    static ByteBuf endRecord(ByteBufAllocator alloc, int restored, String stop, String route) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("restored", restored);
        fields.put("stop", stop);
        fields.put("route", route);
        byte[] json;
        try {
            json = JSON.writeValueAsBytes(fields);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("end record not serializable", e);
        }
        ByteBuf out = alloc.buffer(RecordHeader.BYTES + json.length);
        RecordHeader.writeUnchecked(out, new byte[0], json.length);
        out.writeBytes(json);
        return out;
    }

    /** A delivered route's charge, returned to the budget when its last record was written or dropped. */
    private final class RouteCharge {
        private final long bytes;
        private int remaining;

        RouteCharge(long bytes, int records) {
            this.bytes = bytes;
            this.remaining = records;
        }

        synchronized void recordEnded() {
            if (--remaining == 0) {
                budget.release(bytes);
                returned(bytes);
            }
        }
    }
}
