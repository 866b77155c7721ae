package orbitkv.inventory.session;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.SubscriptionStatus;
import orbitkv.inventory.wire.ErrorCause;
import orbitkv.inventory.wire.InventorySessionGrpc;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SourceFrame;
import orbitkv.membership.Incarnation;
import orbitkv.membership.ProtocolClock;
import orbitkv.membership.RetryBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC shell of the requester end of one directed session (issue 38): it moves frames and timer events
 * between gRPC and the sans-I/O {@link RequesterCore}, which holds every protocol decision (receive checks,
 * view application, ACK cadence, receive deadline). One virtual thread runs the connect loop: open a stream
 * with a fresh random id, then wait on the one {@link WakeSignal} until the core's next deadline or until a
 * stream ends, and back off with jitter before reconnecting. Every core step and the effects it hands out run
 * under the core's monitor, so frames leave in the order the core decided them.
 */
final class RequesterSession {
    private static final Logger LOG = LoggerFactory.getLogger(RequesterSession.class);
    /** Bound on the graceful close of a stopped session's channel. */
    static final long CHANNEL_DRAIN_MS = 1_000;

    private final Subscriber owner;
    private final Incarnation source;
    private final ManagedChannel channel;
    private final MethodDescriptor<RequesterFrame, Inbound<SourceFrame>> method;
    /** The session's time (issue 25): the subscriber's clock, never the host clock read directly. */
    private final ProtocolClock clock;
    private final WakeSignal wake;
    /** Every step and its effects run under this monitor. */
    private final RequesterCore core;
    /** Guarded by {@link #core}: the gRPC call of the core's current stream. */
    private RequesterCall call;
    /** Guarded by {@link #core}: whether the last ended stream made progress. */
    private boolean lastProgressed;
    /** What the connect loop waits for; a step that needs it earlier raises the signal. */
    private volatile long waitingUntilNanos = Long.MAX_VALUE;
    private boolean limitLogged;

    RequesterSession(Subscriber owner, Incarnation source, ManagedChannel channel) {
        this.owner = owner;
        this.source = source;
        this.channel = channel;
        this.clock = owner.clock();
        this.wake = new WakeSignal(clock);
        this.core = new RequesterCore(new RequesterCore.Peer(owner.cluster(), owner.self(), source, owner.scope(),
                owner.config(), owner.receiver(), owner.counters(), owner::view));
        this.method = InventorySessionGrpc.getSessionMethod().toBuilder(ProtoUtils.marshaller(RequesterFrame.getDefaultInstance()),
                Inbound.sourceFrames(owner.config().frameEncodedBytesMax(), owner.config().frameDecodedBytesMax())).build();
    }

    Incarnation source() {
        return source;
    }

    void start() {
        Thread.ofVirtual().name("inventory-session-requester-" + source.nodeId()).start(this::run);
    }

    SubscriptionStatus.PeerSession status() {
        return new SubscriptionStatus.PeerSession(source, core.state().status(), core.connects(), core.installs(), core.lastErrorCause());
    }

    boolean flushThrough(long target) {
        synchronized (core) {
            return perform(core.flushThrough(target));
        }
    }

    /** Stops for good: closes the stream with {@code cause}, discards staging and shuts the channel down. */
    void stop(ErrorCause cause, ResetCause reset) {
        synchronized (core) {
            perform(core.stop(cause, reset));
        }
        wake.raise();
        channel.shutdown(); // graceful: the Error and half-close reach the source; forced after CHANNEL_DRAIN_MS
        Thread.ofVirtual().name("orbitkv-session-close-" + source.nodeId()).start(() -> {
            try {
                if (!channel.awaitTermination(CHANNEL_DRAIN_MS, TimeUnit.MILLISECONDS)) {
                    channel.shutdownNow();
                }
            } catch (InterruptedException e) {
                channel.shutdownNow();
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Under {@link #core}: carries out a step's effects in order; true if any was handed out. */
    private boolean perform(List<RequesterCore.Effect> effects) {
        for (RequesterCore.Effect e : effects) {
            RequesterCall c = call != null && call.id.equals(e.stream()) ? call : null;
            switch (e) {
                case RequesterCore.Effect.Send s -> {
                    if (c != null) {
                        c.send(s.frame());
                    }
                }
                case RequesterCore.Effect.Close cl -> {
                    cl.error().ifPresent(r -> LOG.debug("session to {} failed: {} {}", source, r.cause(), r.detail()));
                    if (c != null) {
                        c.close(cl.error());
                    }
                }
                case RequesterCore.Effect.Abandon a -> {
                    LOG.info("session to {}: {} ({} liveness intervals): replacing its stream and connection", source, a.detail(),
                            RequesterCore.SILENT_LIVENESS_INTERVALS_MAX);
                    if (c != null && c.requests instanceof ClientCallStreamObserver<RequesterFrame> cc) {
                        cc.cancel(a.detail(), null);
                    }
                    channel.enterIdle();
                }
                case RequesterCore.Effect.Ended en -> {
                    lastProgressed = en.progressed();
                    wake.raise();
                }
            }
        }
        if (core.deadlineNanos() < waitingUntilNanos) {
            wake.raise(); // an ACK timer armed: the loop waits for it
        }
        return !effects.isEmpty();
    }

    // ---------------------------------------------------------------- the connect loop

    private void run() {
        RetryBackoff.Sequence backoff = owner.config().reconnectBackoff().sequence();
        try {
            while (!(core.state() instanceof RequesterState.Stopped)) {
                Optional<UUID> opened = connect();
                if (opened.isPresent() && awaitEnd(opened.get())) {
                    backoff.reset();
                }
                long until = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoff.nextDelayMs());
                for (long left; !(core.state() instanceof RequesterState.Stopped) && (left = until - clock.nanoTime()) > 0; ) {
                    wake.await(left);
                }
            }
        } catch (InterruptedException e) { // nothing in this package interrupts the loop; end it as a stop would
            LOG.debug("requester session to {} interrupted", source);
        }
    }

    /** SES-5: the core opens a stream only while both incarnations are admitted. */
    private Optional<UUID> connect() {
        var resume = owner.receiver().installedCursor(source); // outside the monitor: the index's own
        boolean admitted = owner.admits(source);
        UUID id = UUID.randomUUID();
        synchronized (core) {
            List<RequesterCore.Effect> effects = core.connect(clock.nanoTime(), id, resume, admitted);
            if (!core.currentStream().equals(Optional.of(id))) {
                return Optional.empty();
            }
            call = new RequesterCall(this, id);
            try {
                call.requests = ClientCalls.asyncBidiStreamingCall(channel.newCall(method,
                        CallOptions.DEFAULT.withStreamTracerFactory(call.tracer())), call);
            } catch (RuntimeException e) { // a channel that throws (a bug, not a path failure): this stream ends
                LOG.warn("session to {}: opening a stream failed", source, e);
                perform(core.onStreamEnd(id, Optional.of(ErrorCause.INTERNAL.name())));
                return Optional.of(id);
            }
            perform(effects);
        }
        return Optional.of(id);
    }

    /** Runs the core's timers until {@code id} is no longer the current stream; true if it made progress. */
    private boolean awaitEnd(UUID id) throws InterruptedException {
        while (true) {
            long deadline;
            synchronized (core) {
                if (!core.state().streamId().equals(Optional.of(id))) {
                    waitingUntilNanos = Long.MAX_VALUE;
                    return lastProgressed;
                }
                perform(core.onTimer(clock.nanoTime()));
                deadline = core.deadlineNanos();
                waitingUntilNanos = deadline;
            }
            long left = deadline - clock.nanoTime();
            if (left > 0) {
                wake.await(left);
            }
        }
    }

    /** A message of stream {@code id} (the call's gRPC callback). */
    void onMessage(UUID id, Inbound<SourceFrame> in) {
        synchronized (core) {
            perform(core.onFrame(id, clock.nanoTime(), in));
            core.noteArrival(id, clock.nanoTime()); // a long apply (a large commit) is not silence: it ended now
            logLimit();
        }
    }

    /** Bytes of a message of stream {@code id} arrived (gRPC's deframer, lock-free). */
    void onArrival(UUID id) {
        core.noteArrival(id, clock.nanoTime());
    }

    /** Stream {@code id} ended: {@code code} is the transport's status, empty for the source's half-close. */
    void onEnd(UUID id, Optional<Status.Code> code) {
        synchronized (core) {
            if (code.isPresent() && code.get() == Status.Code.UNAVAILABLE && core.currentStream().equals(Optional.of(id))) {
                // this loop's backoff paces reconnects, not the channel's hidden one (1 s growing to 120 s)
                channel.resetConnectBackoff();
            }
            perform(core.onStreamEnd(id, code.map(c -> "TRANSPORT_" + c.name())));
        }
    }

    /** BND-3: a SESSION_LIMIT refusal is logged once per episode, and its end once. */
    private void logLimit() {
        if (core.limitRefused() && !limitLogged) {
            limitLogged = true;
            LOG.warn("source {} refuses this requester's session with SESSION_LIMIT: its coverage stays PartialHints until the "
                    + "source serves fewer sessions or raises its --source-sessions-max (BND-3); retrying with backoff", source);
        } else if (limitLogged && core.state().accepted()) {
            limitLogged = false;
            core.acceptedAgain();
            LOG.info("source {} accepts this requester's session again after SESSION_LIMIT refusals", source);
        }
    }
}
