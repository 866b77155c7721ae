package orbitkv.conformance.peer;

/**
 * The faults of one link of a {@link FaultProxy} (immutable; swap them at any time with
 * {@link FaultProxy#faults}). Each field is one fault kind; {@link #NONE} forwards faithfully.
 *
 * <p>TCP-level faults (both directions): {@code partitioned} holds every byte (nothing is lost: established
 * connections resume when healed, as TCP does after a partition; a new connection is accepted but not
 * connected upstream until then); {@code blackhole} reads and discards (bytes are lost: an HTTP/2
 * connection that survives it fails on the gap); {@code refuse} closes every connection and every new one
 * (a reset); {@code delayMs} plus uniform {@code [0, jitterMs]} per chunk, order kept; {@code lossProbability}
 * per chunk adds a retransmission timeout ({@value #RETRANSMISSION_TIMEOUT_MS} ms: what a lost segment
 * costs a TCP endpoint, which never sees the loss itself); {@code resetProbability} per chunk resets the
 * connection; {@code corruptProbability} per chunk flips one random bit (below TCP's checksum: only for
 * receivers that check their own integrity; a gRPC peer may parse a changed value, see {@link FrameFaults}
 * for detectable corruption); {@code bandwidthBytesPerSecond} paces each direction of the link, shared by all its connections (0: unlimited).
 *
 * @param frames gRPC-message faults on plaintext HTTP/2, or {@link FrameFaults#NONE}
 */
public record LinkFaults(boolean partitioned, boolean blackhole, boolean refuse, long delayMs, long jitterMs,
                         double lossProbability, double resetProbability, double corruptProbability,
                         long bandwidthBytesPerSecond, FrameFaults frames) {
    /** Delay added to a chunk whose segment was "lost". */
    public static final long RETRANSMISSION_TIMEOUT_MS = 200;
    /** Faithful forwarding. */
    public static final LinkFaults NONE = new LinkFaults(false, false, false, 0, 0, 0, 0, 0, 0, FrameFaults.NONE);
    /** A lossy partition: bytes are read and dropped in both directions (the former LoopbackProxy BLACKHOLE). */
    public static final LinkFaults BLACKHOLE = NONE.withBlackhole(true);
    /** Connections are closed at once, new ones too (the former LoopbackProxy REFUSE). */
    public static final LinkFaults REFUSE = NONE.withRefuse(true);
    /** A lossless partition: bytes wait until healed. */
    public static final LinkFaults PARTITION = NONE.withPartitioned(true);

    public LinkFaults {
        if (delayMs < 0 || jitterMs < 0 || bandwidthBytesPerSecond < 0) {
            throw new IllegalArgumentException("delay, jitter and bandwidth must be >= 0");
        }
        probability("loss", lossProbability);
        probability("reset", resetProbability);
        probability("corrupt", corruptProbability);
        if (frames == null) {
            throw new IllegalArgumentException("frames must not be null (use FrameFaults.NONE)");
        }
    }

    static void probability(String what, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(what + " probability must be in [0, 1], got " + p);
        }
    }

    /** True if no fault is set. */
    public boolean none() {
        return equals(NONE);
    }

    public LinkFaults withPartitioned(boolean on) {
        return new LinkFaults(on, blackhole, refuse, delayMs, jitterMs, lossProbability, resetProbability,
                corruptProbability, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withBlackhole(boolean on) {
        return new LinkFaults(partitioned, on, refuse, delayMs, jitterMs, lossProbability, resetProbability,
                corruptProbability, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withRefuse(boolean on) {
        return new LinkFaults(partitioned, blackhole, on, delayMs, jitterMs, lossProbability, resetProbability,
                corruptProbability, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withDelay(long delay, long jitter) {
        return new LinkFaults(partitioned, blackhole, refuse, delay, jitter, lossProbability, resetProbability,
                corruptProbability, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withLoss(double p) {
        return new LinkFaults(partitioned, blackhole, refuse, delayMs, jitterMs, p, resetProbability,
                corruptProbability, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withReset(double p) {
        return new LinkFaults(partitioned, blackhole, refuse, delayMs, jitterMs, lossProbability, p,
                corruptProbability, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withCorruption(double p) {
        return new LinkFaults(partitioned, blackhole, refuse, delayMs, jitterMs, lossProbability, resetProbability,
                p, bandwidthBytesPerSecond, frames);
    }

    public LinkFaults withBandwidth(long bytesPerSecond) {
        return new LinkFaults(partitioned, blackhole, refuse, delayMs, jitterMs, lossProbability, resetProbability,
                corruptProbability, bytesPerSecond, frames);
    }

    public LinkFaults withFrames(FrameFaults f) {
        return new LinkFaults(partitioned, blackhole, refuse, delayMs, jitterMs, lossProbability, resetProbability,
                corruptProbability, bandwidthBytesPerSecond, f);
    }

    /**
     * Faults on whole gRPC messages carried by plaintext HTTP/2 (the InventorySession between Managers): the
     * proxy follows each stream's message boundaries across DATA frames and only touches messages whose
     * prefix (and, to copy or swap them, whose whole body) lies inside one frame, so HTTP/2 framing, HPACK
     * and stream state stay intact and every fault reaches the receiving session as such. Probabilities are per
     * candidate frame of the selected direction(s). With TLS on the link the proxy sees only ciphertext and
     * none of these apply.
     *
     * <ul>
     *   <li>{@code duplicate}: a message is sent twice (the copy as a DATA frame of its own right behind it);
     *       the proxy withholds the receiver's matching WINDOW_UPDATE increments, so both ends' flow-control
     *       views agree again once the receiver has consumed the copy. Until then the copy occupies the
     *       receiver's window: a sender that fills its whole window meanwhile makes the receiver reset the
     *       stream (FLOW_CONTROL_ERROR), an outcome a session must survive like any reset.</li>
     *   <li>{@code reorder}: two neighbouring messages of one frame swap places; a frame of exactly one
     *       message is held back and sent after the next such frame of its stream (or after
     *       {@value FrameFaults#REORDER_HOLD_MS} ms of silence, or before any other frame of the stream).</li>
     *   <li>{@code corrupt}: the message's first byte becomes 0, an invalid protobuf tag: detectably malformed
     *       (a random flip could change a value undetectably; TCP and TLS checksums would stop that on a
     *       real network).</li>
     *   <li>{@code oversize}: the message's length prefix claims {@code oversizeLength} bytes, beyond the
     *       receiver's bound: it must refuse from the prefix, before allocating.</li>
     * </ul>
     *
     * @param towardUpstream apply to messages from the connecting client toward the upstream server
     *     (for a peer link: requester → source)
     * @param towardDownstream apply to messages from upstream toward the client (source → requester)
     */
    public record FrameFaults(double duplicate, double reorder, double corrupt, double oversize, int oversizeLength,
                              boolean towardUpstream, boolean towardDownstream) {
        /** How long a reordered frame waits for a successor before it is sent anyway. */
        public static final long REORDER_HOLD_MS = 50;
        /** No frame faults. */
        public static final FrameFaults NONE = new FrameFaults(0, 0, 0, 0, Integer.MAX_VALUE, false, false);

        public FrameFaults {
            probability("duplicate", duplicate);
            probability("reorder", reorder);
            probability("corrupt", corrupt);
            probability("oversize", oversize);
            if (oversizeLength < 1) {
                throw new IllegalArgumentException("oversizeLength must be >= 1");
            }
        }

        /** True if some fault can fire. */
        public boolean active() {
            return (towardUpstream || towardDownstream) && (duplicate > 0 || reorder > 0 || corrupt > 0 || oversize > 0);
        }

        /** Whether a direction is selected. */
        public boolean applies(boolean upstreamBound) {
            return upstreamBound ? towardUpstream : towardDownstream;
        }
    }
}
