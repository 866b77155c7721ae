package orbitkv.server.restore;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Objects;
import orbitkv.server.tier.RestoreArena;

/**
 * One restore record in an extent of the {@link RestoreArena} (issue 24 item 2): empty, with the extent's bytes as
 * its capacity, so the header is written and the payload copied or READ straight into reused memory. The record
 * owns the extent and frees it when the record is freed, which Netty does once the response holding it was written
 * to the socket or dropped (the same ownership as an {@link InPlaceRecord}'s pin).
 */
final class ArenaRecord extends CompositeByteBuf {
    private final RestoreArena arena;
    private final RestoreArena.Extent extent;

    ArenaRecord(ByteBufAllocator alloc, RestoreArena arena, RestoreArena.Extent extent) {
        super(alloc, true, 1);
        this.arena = Objects.requireNonNull(arena, "arena");
        this.extent = Objects.requireNonNull(extent, "extent");
        // the whole extent is the component (a composite spans its components' readable bytes); the record's own
        // writer index stays 0, so its capacity is the extent and the header is written at its start
        addComponent(false, Unpooled.wrappedBuffer(extent.segment().asByteBuffer()));
    }

    @Override
    protected void deallocate() {
        try {
            super.deallocate();
        } finally {
            arena.free(extent);
        }
    }
}
