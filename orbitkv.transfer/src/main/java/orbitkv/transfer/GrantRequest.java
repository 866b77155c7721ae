package orbitkv.transfer;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import orbitkv.membership.Member;

/**
 * What a requester asks one source to authorize (DESIGN §8): exact residence generations learned from its
 * index (INV-2), the source member they were learned from, and an intent.
 *
 * @param source the source member (its incarnation is the expected source incarnation; its peer endpoint
 *     carries the authorization service)
 * @param intent foreground or prefetch
 * @param blocks 1.. blocks; the source refuses more than its {@code authorizeKeysMax} and duplicates
 * @param timeout the deadline of the Authorize call
 */
public record GrantRequest(Member source, Intent intent, List<BlockRef> blocks, Duration timeout) {
    public GrantRequest {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(intent, "intent");
        blocks = List.copyOf(blocks);
        Objects.requireNonNull(timeout, "timeout");
        if (blocks.isEmpty()) {
            throw new IllegalArgumentException("a grant request names at least one block");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }
}
