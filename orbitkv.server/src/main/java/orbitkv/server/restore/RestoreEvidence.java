package orbitkv.server.restore;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import orbitkv.index.Replica;
import orbitkv.inventory.StateKey;
import orbitkv.membership.Incarnation;
import orbitkv.recovery.Evidence;
import orbitkv.recovery.KeyEvidence;
import orbitkv.recovery.LocalResidence;
import orbitkv.recovery.RouteKind;
import orbitkv.server.tier.LocalTiers;
import orbitkv.server.tier.Residence;

/**
 * The planner's evidence for a demand (DESIGN §8): the local residences per key, the index's replicas on other owners
 * (at most {@link KeyEvidence#REMOTE_REPLICAS_MAX} per key) and the coverage. The same evidence serves a query's
 * recoverable prefix and a restore, so both plan alike (IDX-14).
 */
public final class RestoreEvidence {
    private RestoreEvidence() {}

    /** The evidence of {@code keys}; peer route kinds only where a transfer exists. */
    public static Evidence of(LocalTiers tiers, List<StateKey> keys, IndexEvidence index,
            Optional<RestoreTransfer> transfer) {
        Incarnation self = transfer.map(RestoreTransfer::self).orElse(null);
        List<KeyEvidence> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            List<LocalResidence> local = new ArrayList<>(2);
            for (Residence r : tiers.residences(keys.get(i))) {
                local.add(new LocalResidence(r.medium(), r.sequence(), r.sizeBytes()));
            }
            List<Replica> remote = new ArrayList<>();
            for (Replica r : index.replicas().get(i)) {
                if (!r.owner().equals(self) && remote.size() < KeyEvidence.REMOTE_REPLICAS_MAX) {
                    remote.add(r);
                }
            }
            out.add(new KeyEvidence(keys.get(i), local, remote, index.truncated().get(i)));
        }
        Set<RouteKind> kinds = transfer.isPresent() ? Evidence.allKinds()
                : EnumSet.of(RouteKind.LOCAL_DRAM, RouteKind.LOCAL_SSD);
        return new Evidence(index.coverage(), index.viewGeneration(), kinds, out);
    }
}
