package orbitkv.server.tier;

/**
 * Bytes copied out of the tiers into restore responses that are not written yet, across all requests
 * (issue 20 item 4: memory has a bound that holds). Restore responses live in direct memory; without this
 * bound {@code --http-requests-in-flight-max} restores of {@code --save-body-bytes-max} each could ask for
 * far more than the JVM's direct-memory limit. A restore takes each record's bytes before copying it; when
 * the budget cannot cover the next record, the prefix stops there ({@code stop=response-memory}, counted),
 * never waits. A {@link ByteBudget}.
 */
public final class CopyOutBudget extends ByteBudget {
    /** @param bytesMax the bound, at least 1 */
    public CopyOutBudget(long bytesMax) {
        super("restore copy-out", bytesMax);
    }

    /** Restores stopped because the budget could not cover their next record. */
    public long refusalsTotal() {
        return refusals();
    }
}
