package orbitkv.index;

import java.util.List;
import java.util.Objects;

/** The result of {@link GlobalIndex#lookup}: candidates, or an explicit refusal of an oversized call (IDX-9). */
public sealed interface LookupOutcome {
    /**
     * Candidates with one coverage state and one view generation for the whole call (IDX-7, IDX-8);
     * never a per-member vector.
     *
     * @param coverage the discovery state at the time of the call
     * @param viewGeneration increases with every committed change of the index's owner views or membership
     * @param keys one entry per asked key, in request order
     */
    record Candidates(Coverage coverage, long viewGeneration, List<KeyCandidates> keys) implements LookupOutcome {
        public Candidates {
            Objects.requireNonNull(coverage, "coverage must not be null");
            keys = List.copyOf(keys);
        }
    }

    /**
     * The call exceeded a bound; nothing was looked up.
     *
     * @param field the bound that was exceeded ({@code "keys"} or {@code "bytes"})
     * @param limit the configured bound
     * @param actual what the call asked for
     */
    record Refused(String field, long limit, long actual) implements LookupOutcome {
        public Refused {
            Objects.requireNonNull(field, "refused field must not be null");
        }
    }
}
