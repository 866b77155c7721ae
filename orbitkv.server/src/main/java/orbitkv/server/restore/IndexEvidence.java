package orbitkv.server.restore;

import java.util.Collections;
import java.util.List;
import java.util.Objects;
import orbitkv.index.Coverage;
import orbitkv.index.Replica;

/**
 * What a restore needs of the index's answer for its keys: the coverage, the view generation and, per key in request
 * order, the remote replicas (owner incarnations) and whether that list was cut at its bound (IDX-8, IDX-9).
 * Evidence, never a grant (INV-2): every block is authorized by its source before a READ.
 */
public record IndexEvidence(Coverage coverage, long viewGeneration, List<List<Replica>> replicas, List<Boolean> truncated) {
    public IndexEvidence {
        Objects.requireNonNull(coverage, "coverage");
        Objects.requireNonNull(replicas, "replicas");
        Objects.requireNonNull(truncated, "truncated");
        if (replicas.size() != truncated.size()) {
            throw new IllegalArgumentException("one replica list and one truncated flag per key: " + replicas.size()
                    + " != " + truncated.size());
        }
    }

    /** No remote evidence for {@code keys} keys. */
    public static IndexEvidence none(Coverage coverage, long viewGeneration, int keys) {
        return new IndexEvidence(coverage, viewGeneration, Collections.nCopies(keys, List.of()),
                Collections.nCopies(keys, false));
    }

    /** The evidence of the keys from {@code from} on (a streamed restore's later windows). */
    IndexEvidence from(int from) {
        return new IndexEvidence(coverage, viewGeneration, replicas.subList(from, replicas.size()),
                truncated.subList(from, truncated.size()));
    }
}
