package orbitkv.server.incarnation;

import java.util.Objects;
import orbitkv.inventory.InventoryFence;
import orbitkv.inventory.ScopeDigest;

/**
 * A validated {@code POST /cache/metadata/await} (API-4): the fence to wait for, the requester's scope digest and
 * its timeout, already bounded by {@code --await-timeout-ms-max}.
 */
public record AwaitRequest(InventoryFence fence, ScopeDigest scopeDigest, long timeoutMs) {
    public AwaitRequest {
        Objects.requireNonNull(fence, "fence");
        Objects.requireNonNull(scopeDigest, "scopeDigest");
    }
}
