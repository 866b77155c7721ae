package orbitkv.inventory;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of a source's current residences in resident-map order, taken under one inventory-lock hold
 * ({@link InventorySource#residences}): every record is a put (a residence), and {@code headSequence} is the
 * residency sequence the page is consistent with.
 *
 * @param residences at most the requested limit, ordered
 * @param next where the following page starts (after it), empty on the last page
 * @param headSequence the source's head sequence when the page was taken
 */
public record ResidencePage(List<ResidenceRecord> residences, Optional<ResidencePosition> next, long headSequence) {
    /** The largest page a listing may ask for. */
    public static final int LIMIT_MAX = 1000;

    public ResidencePage {
        residences = List.copyOf(Objects.requireNonNull(residences, "residences must not be null"));
        Objects.requireNonNull(next, "next must not be null (use Optional.empty())");
        if (headSequence < 0) {
            throw new IllegalArgumentException("head sequence must be >= 0, got " + headSequence);
        }
        if (residences.size() > LIMIT_MAX) {
            throw new IllegalArgumentException("a residence page holds at most " + LIMIT_MAX + ", got " + residences.size());
        }
    }
}
