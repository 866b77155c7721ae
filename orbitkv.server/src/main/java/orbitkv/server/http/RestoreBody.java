package orbitkv.server.http;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import orbitkv.server.tier.CopyOutBudget;

/**
 * A restore response body whose bytes are charged to the tiers' {@link CopyOutBudget} until Netty frees it
 * (after the response is written, or on any failure): restore responses never hold more direct memory than
 * the budget ({@code --restore-bytes-in-flight-max}), however many run at once. Each route's records were charged
 * when the route took its receive credits (peer READs write straight into them: requester-owned memory, INV-8);
 * a delivered route's charge moves to this body ({@link #adopt}).
 */
final class RestoreBody extends CompositeByteBuf {
    private final CopyOutBudget budget;
    private long taken;

    RestoreBody(ByteBufAllocator alloc, int maxComponents, CopyOutBudget budget) {
        super(alloc, true, maxComponents);
        this.budget = budget;
    }

    /** Takes over {@code bytes} already charged to the budget: returned when this body is freed. */
    synchronized void adopt(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must be >= 0, got " + bytes);
        }
        taken += bytes;
    }

    @Override
    protected void deallocate() {
        try {
            super.deallocate();
        } finally {
            long bytes;
            synchronized (this) {
                bytes = taken;
                taken = 0;
            }
            budget.release(bytes);
        }
    }
}
