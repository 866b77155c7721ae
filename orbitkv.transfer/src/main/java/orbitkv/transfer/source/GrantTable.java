package orbitkv.transfer.source;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.LongSupplier;
import orbitkv.inventory.PeerIdentity;
import orbitkv.membership.Incarnation;
import orbitkv.membership.MembershipView;
import orbitkv.transfer.BlockRef;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.Intent;
import orbitkv.transfer.PayloadSource;
import orbitkv.transfer.PayloadSource.PinResult;
import orbitkv.transfer.PayloadSource.PinResult.Pinned;
import orbitkv.transfer.RefusalReason;
import orbitkv.transfer.TransferConfig;
import orbitkv.transfer.frame.CountBytesWindow;
import orbitkv.transfer.frame.DataFrames;
import orbitkv.transfer.frame.DataStatus;

/**
 * The source's grants and their pins (DESIGN §8; INV-2, INV-3, INV-9). Every pin taken through
 * {@link PayloadSource#pin} for a grant is bounded here by count and bytes per requester incarnation, in
 * total, and (bytes) for prefetch grants; running out is a named block refusal. Every pin has a terminal
 * owner: the grant ends by explicit release, by expiry on the injected monotonic clock, by exclusion of its
 * requester from membership, or by fence/close, and its pins are released once no payload of it is being
 * sent ({@link SourceGrant}'s DRAINING state). One lock guards the table; nothing under it waits on I/O
 * ({@link PayloadSource#pin} never blocks on I/O).
 *
 * <p>A send never outlives its grant by more than a close: when a grant ends by expiry, exclusion, fence or
 * close, every send of it still in flight is cut ({@link SendCut}: its data connection is closed, so the write
 * fails and {@link #endSend} releases the pin). A requester that stops reading therefore holds a pin until the
 * grant's end, never until TCP gives up. A release is the requester's own word that it is done, so its sends
 * drain, but only until the grant's expiry: the sweep cuts what is still in flight then. Each cut is counted
 * by the end that caused it ({@code sendsCut}).
 */
final class GrantTable {
    /** The source's answer for one block. */
    sealed interface BlockOutcome {
        record Granted(Pinned pin) implements BlockOutcome {}

        record Refused(RefusalReason reason, long currentSequence, String detail) implements BlockOutcome {}
    }

    /** The outcome of {@link #issue}: the grant (null if nothing was granted) and one outcome per block. */
    record Issued(SourceGrant grant, List<BlockOutcome> blocks) {}

    /** The outcome of {@link #beginSend}. */
    sealed interface SendStart {
        record Start(SourceGrant grant, int index, Pinned pin) implements SendStart {}

        record Refuse(DataStatus status, String detail) implements SendStart {}
    }

    /**
     * Ends one send in flight without waiting for its write: closes its data connection, so the write fails and
     * the send's completion calls {@link #endSend}. Called with the table's lock held, so it must only schedule
     * the close (on the connection's event loop), never run the completion inline.
     */
    @FunctionalInterface
    interface SendCut {
        void cut();
    }

    /** The outcome of {@link #bind}. */
    sealed interface BindResult {
        /** The connection may READ the grant now. */
        record Bound(UUID grantId) implements BindResult {}

        /**
         * No active grant of that id (ended, expired, never issued): the connection stays unbound, and a READ of it
         * is answered {@link DataStatus#GRANT_UNKNOWN} as before BINDs existed.
         */
        record Unknown() implements BindResult {}

        /** A forged or misdirected BIND: answered with {@code status}, then the connection closes. */
        record Refused(DataStatus status, String detail) implements BindResult {}
    }

    enum ReleaseResult {
        RELEASED,
        UNKNOWN,
        NOT_OWNER
    }

    private final TransferConfig config;
    private final LongSupplier clock;
    private final SourceCounters counters;
    private final Map<UUID, SourceGrant> grants = new HashMap<>();
    /** Grant secrets: a DRBG seeded once, so issuing never reads a device under the table's lock. */
    private final SecureRandom secrets = drbg();
    /** Present only while a requester holds a pin: at most pinsTotalMax entries. */
    private final Map<Incarnation, CountBytesWindow> perRequester = new HashMap<>();
    private final CountBytesWindow total;
    private final CountBytesWindow prefetch;
    private long outstanding;
    private boolean closed;

    GrantTable(TransferConfig config, LongSupplier clock, SourceCounters counters) {
        this.config = config;
        this.clock = clock;
        this.counters = counters;
        this.total = new CountBytesWindow("pins in total", config.pinsTotalMax(), config.pinnedBytesTotalMax());
        this.prefetch = new CountBytesWindow("prefetch pins", config.pinsTotalMax(), config.prefetchPinnedBytesTotalMax());
    }

    /** Pins what can be pinned of {@code blocks} (already validated: no duplicates) for one new grant. */
    synchronized Issued issue(Incarnation requester, Intent intent, List<BlockRef> blocks, PayloadSource payloads) {
        return issue(requester, intent, blocks, payloads, false);
    }

    /**
     * As above; {@code releaseAfterLastRead}: the grant ends as {@link GrantEnd#RELEASED} at the completion of the
     * send of its last unsent block (issue 37 item 5), as if its Release had arrived then.
     */
    synchronized Issued issue(Incarnation requester, Intent intent, List<BlockRef> blocks, PayloadSource payloads,
            boolean releaseAfterLastRead) {
        List<BlockOutcome> outcomes = new ArrayList<>(blocks.size());
        Pinned[] pins = new Pinned[blocks.size()];
        boolean any = false;
        try {
            for (int i = 0; i < blocks.size(); i++) {
                BlockOutcome o = closed ? new BlockOutcome.Refused(RefusalReason.SOURCE_CLOSED, 0, "the source is closed")
                        : pin(requester, intent, blocks.get(i), payloads);
                if (o instanceof BlockOutcome.Granted g) {
                    pins[i] = g.pin();
                    any = true;
                } else {
                    counters.refusals.increment(((BlockOutcome.Refused) o).reason());
                }
                outcomes.add(o);
            }
        } catch (RuntimeException | Error e) {
            // A failing payload owner must not leak what this request pinned before it failed.
            for (Pinned p : pins) {
                if (p != null) {
                    uncharge(requester, intent, p);
                }
            }
            throw e;
        }
        if (!any) {
            return new Issued(null, outcomes);
        }
        long deadline = clock.getAsLong() + config.grantExpiryMs() * 1_000_000L;
        byte[] secret = new byte[DataFrames.SECRET_BYTES];
        secrets.nextBytes(secret);
        SourceGrant g = new SourceGrant(UUID.randomUUID(), secret, requester, intent, deadline, pins,
                releaseAfterLastRead);
        grants.put(g.id, g);
        outstanding++;
        counters.grantsIssued.incrementAndGet();
        return new Issued(g, outcomes);
    }

    private BlockOutcome pin(Incarnation requester, Intent intent, BlockRef ref, PayloadSource payloads) {
        PinResult r = payloads.pin(ref.key(), ref.medium(), ref.residencySequence());
        return switch (r) {
            case Pinned p -> admit(requester, intent, p);
            case PinResult.StaleGeneration s -> new BlockOutcome.Refused(RefusalReason.STALE_GENERATION,
                    s.currentSequence(), "resident at sequence " + s.currentSequence());
            case PinResult.NotResident n -> new BlockOutcome.Refused(RefusalReason.NOT_RESIDENT, 0, "not resident");
            case PinResult.PinLimit l -> new BlockOutcome.Refused(RefusalReason.PINS_EXHAUSTED, 0,
                    "the payload owner's pins are exhausted (" + l.pinsMax() + " pins, " + l.pinnedBytesMax() + " bytes)");
            case PinResult.Closed c -> new BlockOutcome.Refused(RefusalReason.SOURCE_CLOSED, 0, "the payload owner is closed");
        };
    }

    /** Charges a fresh pin to the bounds, or releases it and names the full bound. */
    private BlockOutcome admit(Incarnation requester, Intent intent, Pinned p) {
        long size = p.sizeBytes();
        if (size > config.blockBytesMax()) {
            p.release();
            return new BlockOutcome.Refused(RefusalReason.BLOCK_TOO_LARGE, 0,
                    "block of " + size + " bytes exceeds blockBytesMax " + config.blockBytesMax());
        }
        CountBytesWindow mine = perRequester.computeIfAbsent(requester, r -> new CountBytesWindow(
                "pins of " + r, config.pinsPerRequesterMax(), config.pinnedBytesPerRequesterMax()));
        CountBytesWindow.Full full = mine.tryAdd(1, size);
        if (full != CountBytesWindow.Full.NONE) {
            dropIfEmpty(requester, mine);
            p.release();
            return new BlockOutcome.Refused(RefusalReason.PINS_EXHAUSTED, 0, "this requester's pins are full by "
                    + (full == CountBytesWindow.Full.COUNT ? "count (pinsPerRequesterMax " + config.pinsPerRequesterMax() + ")"
                            : "bytes (pinnedBytesPerRequesterMax " + config.pinnedBytesPerRequesterMax() + ")"));
        }
        full = total.tryAdd(1, size);
        if (full != CountBytesWindow.Full.NONE) {
            mine.release(1, size);
            dropIfEmpty(requester, mine);
            p.release();
            return new BlockOutcome.Refused(RefusalReason.PINS_EXHAUSTED, 0, "the source's pins are full by "
                    + (full == CountBytesWindow.Full.COUNT ? "count (pinsTotalMax " + config.pinsTotalMax() + ")"
                            : "bytes (pinnedBytesTotalMax " + config.pinnedBytesTotalMax() + ")"));
        }
        if (intent == Intent.PREFETCH && prefetch.tryAdd(1, size) != CountBytesWindow.Full.NONE) {
            total.release(1, size);
            mine.release(1, size);
            dropIfEmpty(requester, mine);
            p.release();
            return new BlockOutcome.Refused(RefusalReason.PREFETCH_LIMIT, 0,
                    "prefetch pins are full (prefetchPinnedBytesTotalMax " + config.prefetchPinnedBytesTotalMax() + ")");
        }
        return new BlockOutcome.Granted(p);
    }

    private void uncharge(Incarnation requester, Intent intent, Pinned p) {
        long size = p.sizeBytes();
        CountBytesWindow mine = perRequester.get(requester);
        mine.release(1, size);
        total.release(1, size);
        if (intent == Intent.PREFETCH) {
            prefetch.release(1, size);
        }
        dropIfEmpty(requester, mine);
        p.release();
    }

    private void dropIfEmpty(Incarnation requester, CountBytesWindow w) {
        if (w.count() == 0) {
            perRequester.remove(requester);
        }
    }

    private static SecureRandom drbg() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }

    /**
     * A BIND of a data connection to grant {@code id}: accepted iff the grant is active and {@code secret} is its
     * secret (compared in constant time) and, under TLS ({@code peer} non-null: what the connection's certificate
     * names), the grant was issued to that node. Changes no grant state.
     */
    synchronized BindResult bind(UUID id, byte[] secret, PeerIdentity.Named peer) {
        SourceGrant g = grants.get(id);
        if (closed || g == null || g.state() != SourceGrant.State.ACTIVE) {
            return new BindResult.Unknown();
        }
        if (!MessageDigest.isEqual(g.secret, secret)) {
            return new BindResult.Refused(DataStatus.BAD_SECRET, "wrong secret for grant " + id);
        }
        switch (peer) {
            case null -> { } // plaintext: the secret is the proof
            case PeerIdentity.Named.None n -> {
                return new BindResult.Refused(DataStatus.PEER_IDENTITY_MISMATCH, "grant " + id + " was issued to node "
                        + g.requester.nodeId() + ", the connection's certificate names no node: " + n.why());
            }
            case PeerIdentity.Named.Node n -> {
                if (!n.nodeId().equals(g.requester.nodeId())) {
                    return new BindResult.Refused(DataStatus.PEER_IDENTITY_MISMATCH, "grant " + id + " was issued to node "
                            + g.requester.nodeId() + ", the connection's certificate names node " + n.nodeId());
                }
            }
        }
        return new BindResult.Bound(id);
    }

    /**
     * Starts sending block {@code index} of grant {@code id}: the pin is held until {@link #endSend}, and
     * {@code cut} ends the send if the grant ends first. {@code bound} says whether the asking connection is bound to
     * {@code id} ({@link #bind}); an unbound READ of an active grant is refused {@link DataStatus#NOT_BOUND}.
     */
    synchronized SendStart beginSend(UUID id, int index, boolean bound, SendCut cut) {
        if (closed) {
            return new SendStart.Refuse(DataStatus.CLOSED, "the source is closed");
        }
        SourceGrant g = grants.get(id);
        if (g == null || g.state() != SourceGrant.State.ACTIVE) {
            return new SendStart.Refuse(DataStatus.GRANT_UNKNOWN, "no active grant " + id);
        }
        if (clock.getAsLong() - g.deadlineNanos >= 0) {
            end(g, GrantEnd.EXPIRED);
            return new SendStart.Refuse(DataStatus.GRANT_UNKNOWN, "grant " + id + " expired");
        }
        if (!bound) {
            return new SendStart.Refuse(DataStatus.NOT_BOUND, "the connection is not bound to grant " + id);
        }
        if (index >= g.pins.length || g.pins[index] == null) {
            return new SendStart.Refuse(DataStatus.BLOCK_NOT_GRANTED, "block " + index + " is not granted");
        }
        if (g.sent[index]) {
            return new SendStart.Refuse(DataStatus.ALREADY_READ, "block " + index + " was already sent");
        }
        g.sent[index] = true;
        g.cuts[index] = Objects.requireNonNull(cut);
        g.sendsInFlight++;
        return new SendStart.Start(g, index, g.pins[index]);
    }

    /** A started send that put no payload byte on the wire: the block may be READ again. */
    synchronized void abortSend(SendStart.Start s) {
        s.grant().sent[s.index()] = false;
        endSend(s);
    }

    /**
     * A started send finished (written out, or failed); a draining grant finishes with its last send, and an active
     * grant released in advance for its last READ ({@link SourceGrant#releaseAfterLastRead}) ends RELEASED once every
     * granted block was sent and nothing is in flight (an aborted send, which may be READ again, does not count).
     */
    synchronized void endSend(SendStart.Start s) {
        SourceGrant g = s.grant();
        if (g.sendsInFlight <= 0) {
            throw new IllegalStateException("grant " + g.id + ": endSend without a send in flight");
        }
        g.sendsInFlight--;
        assert g.sendsInFlight >= 0 : "grant " + g.id + ": " + g.sendsInFlight + " sends in flight";
        g.cuts[s.index()] = null;
        if (g.state() == SourceGrant.State.DRAINING && g.sendsInFlight == 0) {
            finish(g);
        } else if (g.state() == SourceGrant.State.ACTIVE && g.releaseAfterLastRead && g.sendsInFlight == 0
                && g.allSent()) {
            end(g, GrantEnd.RELEASED);
        }
    }

    synchronized ReleaseResult release(Incarnation requester, UUID id) {
        SourceGrant g = grants.get(id);
        if (g == null || g.state() != SourceGrant.State.ACTIVE) {
            return ReleaseResult.UNKNOWN;
        }
        if (!g.requester.equals(requester)) {
            return ReleaseResult.NOT_OWNER;
        }
        end(g, GrantEnd.RELEASED);
        return ReleaseResult.RELEASED;
    }

    /**
     * Ends every grant whose expiry passed on the clock and cuts the sends still draining from released grants
     * past their expiry; returns how many grants it ended.
     */
    synchronized int sweepExpired() {
        long now = clock.getAsLong();
        int n = 0;
        for (SourceGrant g : List.copyOf(grants.values())) {
            if (now - g.deadlineNanos < 0) {
                continue;
            }
            if (g.state() == SourceGrant.State.ACTIVE) {
                end(g, GrantEnd.EXPIRED);
                n++;
            } else if (g.state() == SourceGrant.State.DRAINING) {
                cutSends(g, GrantEnd.EXPIRED);
            }
        }
        return n;
    }

    /**
     * Ends the grants of every requester this valid view does not admit. An invalid view (suspended) ends
     * nothing: already granted work keeps its ownership until it drains or expires (MEM-9).
     */
    synchronized int exclude(MembershipView view) {
        if (!view.valid()) {
            return 0;
        }
        int n = 0;
        for (SourceGrant g : List.copyOf(grants.values())) {
            if (g.state() == SourceGrant.State.ACTIVE && !view.isAdmitted(g.requester)) {
                end(g, GrantEnd.EXCLUDED);
                n++;
            }
        }
        return n;
    }

    /** Ends every grant with {@code cause}; with {@code close}, refuses every later issue and send. */
    synchronized void endAll(GrantEnd cause, boolean close) {
        closed |= close;
        for (SourceGrant g : List.copyOf(grants.values())) {
            if (g.state() == SourceGrant.State.ACTIVE) {
                end(g, cause);
            }
        }
    }

    private void end(SourceGrant g, GrantEnd cause) {
        outstanding--;
        assert outstanding >= 0 : outstanding + " grants outstanding"; // each grant ends once (INV-8)
        counters.grantsEnded.increment(cause);
        if (g.sendsInFlight > 0) {
            g.transition(SourceGrant.State.DRAINING, cause);
            if (cause != GrantEnd.RELEASED) {
                cutSends(g, cause);
            }
        } else {
            g.transition(SourceGrant.State.FINISHED, cause);
            releasePins(g);
        }
    }

    /** Cuts each send of {@code g} not yet cut; the pins go when their writes fail ({@link #endSend}). */
    private void cutSends(SourceGrant g, GrantEnd cause) {
        for (int i = 0; i < g.cuts.length; i++) {
            SendCut c = g.cuts[i];
            if (c != null) {
                g.cuts[i] = null; // once: a cut send stays in flight until its write fails
                counters.sendsCut.increment(cause);
                c.cut();
            }
        }
    }

    private void finish(SourceGrant g) {
        g.transition(SourceGrant.State.FINISHED, null);
        releasePins(g);
    }

    private void releasePins(SourceGrant g) {
        grants.remove(g.id);
        for (Pinned p : g.pins) {
            if (p != null) {
                uncharge(g.requester, g.intent, p); // the window empties only with this grant's last pin
            }
        }
    }

    synchronized long outstanding() {
        return outstanding;
    }

    synchronized long pinsHeld() {
        return total.count();
    }

    synchronized long pinnedBytesHeld() {
        return total.bytes();
    }

    synchronized long prefetchPinnedBytesHeld() {
        return prefetch.bytes();
    }

    /** Requesters holding pins now (bounded by pinsTotalMax). */
    synchronized int requestersHoldingPins() {
        return perRequester.size();
    }
}
