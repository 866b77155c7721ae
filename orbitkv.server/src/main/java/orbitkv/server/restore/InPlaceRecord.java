package orbitkv.server.restore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Objects;
import orbitkv.transfer.PayloadSource.PinResult;

/**
 * One restore record whose payload is sent from the DRAM arena where it is stored (issue 24 item 2): the
 * record's header buffer followed by a read-only view of the verified payload. It owns the tier pin that keeps
 * those bytes unmodified (INV-9) and releases it when the record is freed, which Netty does once the response
 * holding it was written to the socket or dropped. No payload byte is copied in user space.
 */
final class InPlaceRecord extends CompositeByteBuf {
    private final PinResult.Pinned pin;

    InPlaceRecord(ByteBufAllocator alloc, ByteBuf header, ByteBuffer payload, PinResult.Pinned pin) {
        super(alloc, true, 2, header, Unpooled.wrappedBuffer(payload));
        this.pin = Objects.requireNonNull(pin, "pin");
    }

    @Override
    protected void deallocate() {
        try {
            super.deallocate();
        } finally {
            pin.release(); // idempotent: the tier releases a pin exactly once
        }
    }
}
