package orbitkv.transfer;

import java.util.Objects;

/**
 * The node-wide account of a source's egress on its NIC (issue 39 item 2; ROUTE-11, BND-1): the source's own window
 * ({@link TransferConfig#sourceEgressInFlightBytesMax()}) bounds what this source hands to its data connections; this
 * account bounds what the whole node sends on the NIC of the data listener's bound address (loopback counts), beside
 * an engine's own P/D WRITEs. The Manager implements it with the transmit lane of that NIC in its node-local
 * admission window; {@link #NONE} charges nothing.
 *
 * <p>Life of a charge: the source asks for {@link #charge} once per send, after the send fits its own window and
 * before the first byte of the answer is handed to the socket; a {@link Charge.Refused} refuses the READ by name
 * ({@link DataRefusal#EGRESS_NIC_WINDOW}; on the wire {@code EGRESS_LIMIT}, so the block may be asked again). A
 * {@link Charge.Held} is {@linkplain Charge.Held#complete() completed} exactly once, when the send physically ended
 * (its write completed or failed, or its payload could not be opened): never on a timer.
 *
 * <p>Threading: both calls run on the source's data event loops and must not block (no I/O, no waiting).
 */
@FunctionalInterface
public interface EgressAccount {
    /** No node-wide account: only the source's own window bounds its egress. */
    EgressAccount NONE = (nic, bytes) -> Charge.Held.FREE;

    /**
     * Charges {@code bytes} (positive) of one send on {@code nic}; never blocks.
     *
     * @param nic the interface name of the data listener's bound address ({@link TransferSource#egressNic()})
     * @return the charge to complete at the send's physical end, or the refusal (nothing charged)
     */
    Charge charge(String nic, long bytes);

    /** The answer of {@link #charge}. */
    sealed interface Charge {
        /**
         * Charged: {@link #complete()} returns the bytes; it is called exactly once, at the send's physical end.
         *
         * @param returner what returns the bytes (run with the transport's terminal evidence)
         */
        record Held(Runnable returner) implements Charge {
            /** A charge of nothing. */
            public static final Held FREE = new Held(() -> { });

            public Held {
                Objects.requireNonNull(returner, "returner");
            }

            /** The send ended physically: the bytes go back. */
            public void complete() {
                returner.run();
            }
        }

        /**
         * Refused, nothing charged.
         *
         * @param detail why, naming the lane and its numbers (at most a line)
         */
        record Refused(String detail) implements Charge {
            public Refused {
                Objects.requireNonNull(detail, "detail");
            }
        }
    }
}
