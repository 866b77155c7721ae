package orbitkv.server.transfer;

import orbitkv.server.tier.ByteBudget;

/**
 * The requester's receive credits for peer routes (ROUTE-11, DESIGN "Receive credits"): a bounded in-flight byte
 * window ({@code --transfer-receive-in-flight-bytes-max}) that a route takes <em>before</em> its source is asked to
 * authorize and keeps until its READs physically drained, so a refusal names this Manager's window and never costs a
 * source a grant or a pin. A route takes the bytes it may have in flight at once; the engine's own per-READ window of
 * the same size therefore never refuses a READ of a credited route. A {@link ByteBudget} whose takes and releases are
 * positive. Owner: {@link PeerTransfer}.
 *
 * <p>The node-local admission window (issue 39) is separate: a route asks it for room before its authorization
 * ({@code NodeAdmissionService.managerReadRoom}) and each of its READs is charged to it on its own, in deadline order
 * ({@code PeerReads}).
 */
public final class ReceiveCredits extends ByteBudget {
    /** @param bytesMax the window; positive */
    public ReceiveCredits(long bytesMax) {
        super("receive credits", bytesMax);
    }

    /** Takes {@code bytes} (positive) if they fit beside what is held; otherwise counts a refusal and takes nothing. */
    @Override
    public boolean tryTake(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be positive, got " + bytes);
        }
        return super.tryTake(bytes);
    }

    /** Returns {@code bytes} (positive) taken earlier; returning more than is held is a bookkeeping bug and throws. */
    @Override
    public void release(long bytes) {
        if (bytes <= 0) {
            throw new IllegalStateException("release of " + bytes + " bytes with " + heldBytes() + " held");
        }
        super.release(bytes);
    }

    /** Why a take of {@code bytes} was refused: this window's numbers. */
    public String refusalDetail(long bytes) {
        return bytes + " bytes do not fit beside the " + heldBytes() + " held of --transfer-receive-in-flight-bytes-max "
                + bytesMax();
    }
}
