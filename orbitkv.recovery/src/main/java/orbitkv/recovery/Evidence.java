package orbitkv.recovery;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import orbitkv.index.Coverage;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;

/**
 * The request's evidence (ROUTE-1): one {@link KeyEvidence} per demanded key in demand order, the index
 * lookup's coverage state and view generation (IDX-7), and which route kinds have a physically qualified
 * path on this Manager (for example no peer kinds while no transfer engine is wired).
 *
 * @param coverage the lookup's discovery state; it decides why a prefix stops at a key nobody lists
 * @param viewGeneration the lookup's view generation (traced)
 * @param qualifiedKinds route kinds this Manager can execute
 * @param keys one entry per demanded key, in demand order
 */
public record Evidence(Coverage coverage, long viewGeneration, Set<RouteKind> qualifiedKinds, List<KeyEvidence> keys) {
    public Evidence {
        Objects.requireNonNull(coverage, "evidence coverage must not be null");
        qualifiedKinds = qualifiedKinds.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(qualifiedKinds));
        keys = List.copyOf(keys);
        if (keys.size() > Demand.KEYS_MAX) {
            throw new IllegalArgumentException("evidence for " + keys.size() + " keys exceeds " + Demand.KEYS_MAX);
        }
    }

    /** Every route kind. */
    public static Set<RouteKind> allKinds() {
        return EnumSet.allOf(RouteKind.class);
    }

    /**
     * Joins an index lookup with the local tiers' residences.
     *
     * @param lookup the index's candidates for exactly the demand's keys, in demand order
     * @param local per demanded key, its local residences (same order)
     * @param qualifiedKinds route kinds this Manager can execute
     */
    public static Evidence of(LookupOutcome.Candidates lookup, List<List<LocalResidence>> local, Set<RouteKind> qualifiedKinds) {
        if (lookup.keys().size() != local.size()) {
            throw new IllegalArgumentException("lookup has " + lookup.keys().size() + " keys but local evidence has " + local.size());
        }
        List<KeyEvidence> keys = new ArrayList<>(local.size());
        for (int i = 0; i < local.size(); i++) {
            KeyCandidates c = lookup.keys().get(i);
            keys.add(new KeyEvidence(c.key(), local.get(i), c.replicas(), c.truncated()));
        }
        return new Evidence(lookup.coverage(), lookup.viewGeneration(), qualifiedKinds, keys);
    }

    /**
     * Evidence from the local tiers only: coverage {@link Coverage#Unavailable} (standalone, or no distributed
     * metadata), only local kinds qualified.
     */
    public static Evidence localOnly(List<KeyEvidence> keys) {
        return new Evidence(Coverage.Unavailable, 0, EnumSet.of(RouteKind.LOCAL_DRAM, RouteKind.LOCAL_SSD), keys);
    }

    /** Checks that this evidence describes exactly the demand's keys, in order. */
    public void requireMatches(Demand demand) {
        if (keys.size() != demand.keys().size()) {
            throw new IllegalArgumentException("evidence has " + keys.size() + " keys, the demand " + demand.keys().size());
        }
        for (int i = 0; i < keys.size(); i++) {
            if (!keys.get(i).key().equals(demand.keys().get(i))) {
                throw new IllegalArgumentException("evidence key " + i + " is " + keys.get(i).key() + ", the demand's is "
                        + demand.keys().get(i));
            }
        }
    }
}
