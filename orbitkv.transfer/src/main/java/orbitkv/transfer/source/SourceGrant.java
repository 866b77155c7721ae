package orbitkv.transfer.source;

import java.util.Objects;
import java.util.UUID;
import orbitkv.membership.Incarnation;
import orbitkv.transfer.GrantEnd;
import orbitkv.transfer.Intent;
import orbitkv.transfer.PayloadSource.PinResult.Pinned;

/**
 * One grant at its source: the pins of its granted blocks, which blocks were sent, and its lifetime (INV-9).
 * Guarded by the {@link GrantTable}'s lock.
 *
 * <p>States: {@code ACTIVE} (READs may start) → {@code DRAINING} (ended while payload of it is being sent:
 * the pins stay until the last send completes, so no byte on the wire is ever reused memory) →
 * {@code FINISHED} (pins released, exactly once). An ended grant with nothing in flight goes from
 * {@code ACTIVE} to {@code FINISHED} directly. Any other edge throws.
 *
 * <p>A send in flight is held with its {@link GrantTable.SendCut}, so the table can end it when the grant ends
 * instead of waiting for a write that a stalled requester may never let complete.
 */
final class SourceGrant {
    enum State {
        ACTIVE,
        DRAINING,
        FINISHED
    }

    final UUID id;
    /**
     * The grant's secret ({@code Authorized.grant_secret}): a data connection READs this grant only after a BIND
     * with it (docs/transfer.md "Data channel"). Never logged, never in toString.
     */
    final byte[] secret;
    final Incarnation requester;
    final Intent intent;
    final long deadlineNanos;
    /** The pin of each requested block; null where the block was refused. */
    final Pinned[] pins;
    final boolean[] sent;
    /** The cut of each block being sent now; null when it is not in flight or was already cut. */
    final GrantTable.SendCut[] cuts;
    final int pinCount;
    final long pinnedBytes;
    /**
     * The requester released this grant in advance for the completion of its last send (issue 37 item 5,
     * {@code AuthorizeRequest.release_after_last_read}): it ends as {@link GrantEnd#RELEASED} when every granted block
     * was sent and no send is in flight.
     */
    final boolean releaseAfterLastRead;
    int sendsInFlight;
    private State state = State.ACTIVE;
    private GrantEnd end;

    SourceGrant(UUID id, byte[] secret, Incarnation requester, Intent intent, long deadlineNanos, Pinned[] pins,
            boolean releaseAfterLastRead) {
        this.releaseAfterLastRead = releaseAfterLastRead;
        this.id = Objects.requireNonNull(id);
        this.secret = secret.clone();
        this.requester = Objects.requireNonNull(requester);
        this.intent = Objects.requireNonNull(intent);
        this.deadlineNanos = deadlineNanos;
        this.pins = pins;
        this.sent = new boolean[pins.length];
        this.cuts = new GrantTable.SendCut[pins.length];
        int n = 0;
        long bytes = 0;
        for (Pinned p : pins) {
            if (p != null) {
                n++;
                bytes += p.sizeBytes();
            }
        }
        if (n == 0) {
            throw new IllegalArgumentException("a grant holds at least one pin");
        }
        this.pinCount = n;
        this.pinnedBytes = bytes;
    }

    State state() {
        return state;
    }

    /** Every granted block was sent (or is being sent): no READ of this grant can be served any more. */
    boolean allSent() {
        for (int i = 0; i < pins.length; i++) {
            if (pins[i] != null && !sent[i]) {
                return false;
            }
        }
        return true;
    }

    GrantEnd end() {
        return end;
    }

    /** The one transition method: checks the edge and the invariants of the target state. */
    void transition(State to, GrantEnd cause) {
        boolean legal = switch (state) {
            case ACTIVE -> to == State.DRAINING || to == State.FINISHED;
            case DRAINING -> to == State.FINISHED;
            case FINISHED -> false;
        };
        if (!legal) {
            throw new IllegalStateException("grant " + id + ": illegal transition " + state + " -> " + to);
        }
        if (to == State.DRAINING && sendsInFlight == 0) {
            throw new IllegalStateException("grant " + id + ": DRAINING with no send in flight");
        }
        if (to == State.FINISHED && sendsInFlight != 0) {
            throw new IllegalStateException("grant " + id + ": FINISHED with " + sendsInFlight + " sends in flight");
        }
        if (state == State.ACTIVE) {
            end = Objects.requireNonNull(cause, "cause");
        }
        state = to;
    }
}
