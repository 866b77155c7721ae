package orbitkv.server.transfer;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;
import orbitkv.server.admission.NodeAdmissionService;
import orbitkv.server.tier.ByteBudget;

/**
 * The requester's receive credits for peer routes (ROUTE-11, DESIGN "Receive credits"): a bounded in-flight byte
 * window ({@code --transfer-receive-in-flight-bytes-max}) that a route takes <em>before</em> its source is asked to
 * authorize and keeps until its READs physically drained, so a refusal names this Manager's window and never costs a
 * source a grant or a pin. A route takes the bytes it may have in flight at once; the engine's own per-READ window of
 * the same size therefore never refuses a READ of a credited route. A {@link ByteBudget} whose takes and releases are
 * positive. Owner: {@link PeerTransfer}.
 *
 * <p>issue 39: with the node-local admission window on, every take is also charged to the rx lane of this Manager's
 * NIC ({@link NodeAdmissionService#chargeManagerRead}), beside engines' P/D WRITEs, and returned at the same release
 * (drain: the transport's terminal evidence). A take the node window refuses is refused whole.
 */
public final class ReceiveCredits extends ByteBudget {
    private final Optional<NodeAdmissionService> node;
    /** Node charges by take size (a release gives back exactly what one take of that size took). */
    private final Map<Long, ArrayDeque<NodeAdmissionService.ManagerCharge>> charges = new HashMap<>();
    private final LongAdder nodeRefusals = new LongAdder();
    private volatile String lastNodeRefusal = "";

    /** @param bytesMax the window; positive */
    public ReceiveCredits(long bytesMax) {
        this(bytesMax, Optional.empty());
    }

    /**
     * @param bytesMax the window; positive
     * @param node the node-local admission window, charged beside this one
     */
    public ReceiveCredits(long bytesMax, Optional<NodeAdmissionService> node) {
        super("receive credits", bytesMax);
        this.node = node;
    }

    /**
     * Takes {@code bytes} (positive) if they fit beside what is held and in the node's admission window; otherwise
     * counts a refusal and takes nothing.
     */
    @Override
    public boolean tryTake(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be positive, got " + bytes);
        }
        if (!super.tryTake(bytes)) {
            return false;
        }
        if (node.isEmpty()) {
            return true;
        }
        NodeAdmissionService.ManagerCharge c = node.get().chargeManagerRead(bytes);
        if (!c.granted()) {
            super.release(bytes);
            nodeRefusals.increment();
            lastNodeRefusal = c.refused().detail();
            return false;
        }
        synchronized (charges) {
            charges.computeIfAbsent(bytes, b -> new ArrayDeque<>()).addLast(c);
        }
        return true;
    }

    /** Returns {@code bytes} (positive) taken earlier; returning more than is held is a bookkeeping bug and throws. */
    @Override
    public void release(long bytes) {
        if (bytes <= 0) {
            throw new IllegalStateException("release of " + bytes + " bytes with " + heldBytes() + " held");
        }
        super.release(bytes);
        if (node.isPresent()) {
            NodeAdmissionService.ManagerCharge c;
            synchronized (charges) {
                ArrayDeque<NodeAdmissionService.ManagerCharge> q = charges.get(bytes);
                c = q.pollFirst();
                if (q.isEmpty()) {
                    charges.remove(bytes);
                }
            }
            node.get().returnManagerRead(c, bytes);
        }
    }

    /** Takes refused by the node-local admission window (issue 39). */
    public long nodeRefusals() {
        return nodeRefusals.sum();
    }

    /** Why a take was refused: this window's numbers, and the node window's last refusal when it refused. */
    public String refusalDetail(long bytes) {
        if (bytes <= bytesMax() - heldBytes() && node.isPresent()) {
            return "node admission refused " + bytes + " bytes: " + lastNodeRefusal;
        }
        return bytes + " bytes do not fit beside the " + heldBytes() + " held of --transfer-receive-in-flight-bytes-max "
                + bytesMax();
    }
}
