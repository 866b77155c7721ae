package orbitkv.recovery;

/**
 * The state a demand must reach before it counts as usable (ROUTE-1): a route is eligible only for the
 * completion target it can actually reach. HBM/GPU readiness and host readiness are different targets (INV-8):
 * an HBM hit never substitutes for HostReady, and HostReady proves nothing about GPU readiness.
 *
 * <p>Only {@link HostReady} is supported today; {@link GpuReady} is representable so an engine adapter can ask
 * for it, and every plan for it is the explicit stop {@link PrefixStop#TARGET_UNSUPPORTED}.
 */
public sealed interface CompletionTarget {
    /** True iff this implementation can plan for the target. */
    boolean supported();

    /** The short lowercase name used in traces. */
    String traceName();

    /** The bytes are in requester-owned host memory, verified, and handed to the caller. */
    record HostReady() implements CompletionTarget {
        @Override
        public boolean supported() {
            return true;
        }

        @Override
        public String traceName() {
            return "host";
        }
    }

    /**
     * The state is consumable by the engine on its device. Not supported: there is no engine adapter
     * contract for device destinations here (no GPU on this machine), so planning for it stops at once.
     */
    record GpuReady() implements CompletionTarget {
        @Override
        public boolean supported() {
            return false;
        }

        @Override
        public String traceName() {
            return "gpu";
        }
    }

    /** The one supported target. */
    static CompletionTarget hostReady() {
        return new HostReady();
    }
}
