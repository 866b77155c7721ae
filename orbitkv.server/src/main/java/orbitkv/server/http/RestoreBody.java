package orbitkv.server.http;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import orbitkv.server.tier.CopyOutBudget;

/**
 * A restore response body whose bytes are charged to the tiers' {@link CopyOutBudget} until Netty frees it
 * (after the response is written, or on any failure): restore responses never hold more direct memory than
 * the budget ({@code --restore-bytes-in-flight-max}), however many run at once. Peer READs write straight into
 * the records of this body (requester-owned memory, INV-8), so the same bound covers them.
 */
final class RestoreBody extends CompositeByteBuf {
    private final CopyOutBudget budget;
    private long taken;

    RestoreBody(ByteBufAllocator alloc, int maxComponents, CopyOutBudget budget) {
        super(alloc, true, maxComponents);
        this.budget = budget;
    }

    /** Charges {@code bytes} to the budget; false (nothing charged) when it is full. */
    boolean take(long bytes) {
        if (!budget.tryTake(bytes)) {
            return false;
        }
        taken += bytes;
        return true;
    }

    /** Returns bytes charged for a record that will not be part of the body. */
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
