package orbitkv.inventory.session;

import java.util.ArrayDeque;
import java.util.Objects;
import orbitkv.membership.ProtocolClock;

/**
 * The source's credit ledger of one session (SES-13, SES-3): the encoded bytes of every sent data frame
 * not yet acknowledged, bounded by a byte window and a frame count. A contiguous ACK of frame {@code n}
 * returns exactly the bytes recorded for frames {@code <= n}, once. A duplicate ACK ({@code n} at or below
 * the acknowledged frame) returns nothing and is counted; an ACK above the last sent frame is a protocol
 * error ({@link AckOutcome.Future}) and returns nothing. Control frames are numbered but not ledgered.
 * Thread-safe (the pump charges, the inbound thread acknowledges).
 */
final class CreditLedger {
    private final long windowBytes;
    private final int windowFrames;
    /** Stamps each charged frame's send time for the ACK round trip (the session's clock). */
    private final ProtocolClock clock;
    private final ArrayDeque<long[]> outstanding = new ArrayDeque<>();
    private long outstandingBytes;
    private long peakOutstandingBytes;
    private long ackedThroughFrame;
    private long lastSentFrame;
    private long returnedBytes;
    private long duplicateAcks;
    private long futureAcks;

    /** A ledger stamping send times on the host's monotonic clock. */
    CreditLedger(long windowBytes, int windowFrames) {
        this(windowBytes, windowFrames, ProtocolClock.monotonicTimeOnly());
    }

    CreditLedger(long windowBytes, int windowFrames, ProtocolClock clock) {
        if (windowBytes < 1 || windowFrames < 1) {
            throw new IllegalArgumentException("credit window must be >= 1 byte and >= 1 frame, got "
                    + windowBytes + " bytes, " + windowFrames + " frames");
        }
        this.windowBytes = windowBytes;
        this.windowFrames = windowFrames;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** What an ACK did. */
    sealed interface AckOutcome {
        /**
         * Bytes returned to the window (possibly 0 when only control frames were acknowledged).
         *
         * @param sentNanos when the newest returned data frame was handed to the transport, 0 if none
         */
        record Returned(long bytes, long sentNanos) implements AckOutcome {}

        /** At or below the acknowledged frame: nothing returned (counted). */
        record Duplicate(long ackedThroughFrame) implements AckOutcome {}

        /** Above the last sent frame: a fabricated ACK, nothing returned (FUTURE_ACK). */
        record Future(long lastSentFrame) implements AckOutcome {}
    }

    /** True iff a data frame of {@code bytes} would not fit the window now. */
    synchronized boolean full(long bytes) {
        return outstanding.size() >= windowFrames || outstandingBytes + bytes > windowBytes;
    }

    /**
     * Records data frame {@code frame} of {@code bytes}.
     *
     * @throws IllegalStateException if it does not fit or the frame number is not above the last one
     */
    synchronized void charge(long frame, long bytes) {
        charge(frame, bytes, clock.nanoTime());
    }

    /** As {@link #charge(long, long)} with the send time (for the ACK round-trip metric). */
    synchronized void charge(long frame, long bytes, long sentNanos) {
        noteSent(frame);
        if (bytes < 1 || outstanding.size() >= windowFrames || outstandingBytes + bytes > windowBytes) {
            throw new IllegalStateException("frame " + frame + " of " + bytes + " bytes does not fit the credit window ("
                    + outstandingBytes + " of " + windowBytes + " bytes, " + outstanding.size() + " of " + windowFrames + " frames)");
        }
        outstanding.addLast(new long[] {frame, bytes, sentNanos});
        outstandingBytes += bytes;
        peakOutstandingBytes = Math.max(peakOutstandingBytes, outstandingBytes);
        assert outstandingBytes <= windowBytes && outstanding.size() <= windowFrames : "SES-13: credit window exceeded";
    }

    /** Records a numbered control frame (no credit). */
    synchronized void noteSent(long frame) {
        if (frame <= lastSentFrame) {
            throw new IllegalStateException("frame " + frame + " is not above the last sent frame " + lastSentFrame);
        }
        lastSentFrame = frame;
    }

    /** Applies an ACK of the contiguous consumed frame {@code consumedThrough}. */
    synchronized AckOutcome ack(long consumedThrough) {
        if (consumedThrough > lastSentFrame || consumedThrough < 0) {
            futureAcks++;
            return new AckOutcome.Future(lastSentFrame);
        }
        if (consumedThrough <= ackedThroughFrame) {
            duplicateAcks++;
            return new AckOutcome.Duplicate(ackedThroughFrame);
        }
        long returned = 0;
        long sentNanos = 0;
        while (!outstanding.isEmpty() && outstanding.peekFirst()[0] <= consumedThrough) {
            long[] e = outstanding.pollFirst();
            returned += e[1];
            sentNanos = e[2];
        }
        outstandingBytes -= returned;
        returnedBytes += returned;
        ackedThroughFrame = consumedThrough;
        assert outstandingBytes >= 0 && (outstandingBytes == 0) == outstanding.isEmpty()
                : "SES-13: outstanding credit " + outstandingBytes + " bytes over " + outstanding.size() + " frames";
        return new AckOutcome.Returned(returned, sentNanos);
    }

    synchronized long outstandingBytes() {
        return outstandingBytes;
    }

    synchronized long peakOutstandingBytes() {
        return peakOutstandingBytes;
    }

    synchronized long returnedBytes() {
        return returnedBytes;
    }

    synchronized long duplicateAcks() {
        return duplicateAcks;
    }

    synchronized long futureAcks() {
        return futureAcks;
    }

    synchronized long lastSentFrame() {
        return lastSentFrame;
    }

    synchronized long ackedThroughFrame() {
        return ackedThroughFrame;
    }
}
