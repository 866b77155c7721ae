package orbitkv.server.restore;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.List;
import orbitkv.recovery.Route;
import orbitkv.recovery.RouteBlock;
import orbitkv.server.tier.CopyOutBudget;
import orbitkv.server.transfer.ReceiveCredits;
import orbitkv.transfer.Backend;
import orbitkv.transfer.PayloadSource.PinResult;

/**
 * One route's destination: a framed record per block (header written, payload filled by the READ), charged to the
 * restore memory budget until it is freed or delivered. Released by the executor exactly once (after drain when
 * submitted); a delivered destination belongs to the restore's result, whose consumer frees its records (INV-8:
 * requester-owned memory, never exposed before it is ready).
 */
final class RestoreRecords {
    final Route route;
    final List<ByteBuf> records;
    /** Record bytes charged to {@link #budget} for this route. */
    final long bytes;
    final Backend[] backends;
    /** The receive credits this route holds until the executor releases it (peer routes), else 0. */
    final long creditBytes;
    private final ReceiveCredits window;
    private final ByteBufAllocator alloc;
    private final CopyOutBudget budget;
    private boolean ready;
    private boolean released;
    private boolean delivered;
    private boolean abandoned;
    private boolean freed;

    RestoreRecords(Route route, List<ByteBuf> records, long bytes, ReceiveCredits window, long creditBytes,
            ByteBufAllocator alloc, CopyOutBudget budget) {
        this.route = route;
        this.records = records;
        this.bytes = bytes;
        this.backends = new Backend[records.size()];
        this.window = window;
        this.creditBytes = creditBytes;
        this.alloc = alloc;
        this.budget = budget;
    }

    /** The payload range of block {@code b}, after its header. */
    ByteBuffer payload(int b) {
        ByteBuf rec = records.get(b);
        return rec.nioBuffer(rec.writerIndex(), (int) route.blocks().get(b).sizeBytes());
    }

    /** Block {@code b}'s payload after it was filled and verified (a view; the record keeps it). */
    ByteBuffer verifiedPayload(int b) {
        ByteBuf rec = records.get(b);
        RouteBlock block = route.blocks().get(b);
        return rec.nioBuffer(rec.readerIndex() + (int) RecordHeader.recordBytes(block.key().key().length, 0),
                (int) block.sizeBytes());
    }

    /**
     * Block {@code b}'s verified payload is sent from where it is stored: its record becomes the header followed by
     * {@code bytes}, and owns {@code pin} until the record is freed (written, or dropped with the response).
     */
    void sendInPlace(int b, ByteBuffer bytes, PinResult.Pinned pin) {
        ByteBuf header = records.get(b);
        RouteBlock block = route.blocks().get(b);
        if (header.readableBytes() != RecordHeader.BYTES + block.key().key().length
                || bytes.remaining() != block.sizeBytes()) {
            throw new IllegalStateException("an in-place record is its header alone, then exactly the payload");
        }
        records.set(b, new InPlaceRecord(alloc, header, bytes, pin));
    }

    /** Block {@code b}'s payload arrived and was verified. */
    void filled(int b, Backend backend) {
        ByteBuf rec = records.get(b);
        rec.writerIndex(rec.writerIndex() + (int) route.blocks().get(b).sizeBytes());
        backends[b] = backend;
    }

    synchronized void ready() {
        ready = true;
    }

    synchronized void release() {
        if (!released && window != null) {
            window.release(creditBytes); // after drain when submitted: the READs no longer write (ROUTE-11)
        }
        released = true;
        if (!ready || abandoned) {
            free();
        }
    }

    /** Hands the ready records to the result: from now on whoever consumes them frees them and their charge. */
    synchronized void deliver() {
        if (!ready || freed) {
            throw new IllegalStateException("a delivered destination is ready and not freed");
        }
        delivered = true;
    }

    synchronized void abandon() {
        abandoned = true;
        if (released) {
            free();
        }
    }

    synchronized boolean isFreed() {
        return freed;
    }

    private void free() {
        if (freed || delivered) {
            return;
        }
        freed = true;
        records.forEach(ByteBuf::release);
        budget.release(bytes);
    }
}
