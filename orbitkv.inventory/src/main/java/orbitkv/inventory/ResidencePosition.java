package orbitkv.inventory;

import java.util.Objects;

/**
 * A position in the ordered resident map: one {@code (StateKey, medium)} in resident-map order (DESIGN §4,
 * {@link ResidenceOrder}). A residence listing continues strictly after it.
 *
 * @param key the state key
 * @param medium the medium
 */
public record ResidencePosition(StateKey key, Medium medium) {
    public ResidencePosition {
        Objects.requireNonNull(key, "position key must not be null");
        Objects.requireNonNull(medium, "position medium must not be null");
    }

    /** The position of a listed residence. */
    public static ResidencePosition of(ResidenceRecord r) {
        return new ResidencePosition(r.key(), r.medium());
    }
}
