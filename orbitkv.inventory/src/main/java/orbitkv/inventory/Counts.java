package orbitkv.inventory;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/** Validation of the enum-keyed counts in the metric snapshot records. */
final class Counts {
    private Counts() {}

    /** An unmodifiable copy in enum order; every count {@code >= 0}. */
    static <E extends Enum<E>> Map<E, Long> copy(String field, Class<E> type, Map<E, Long> counts) {
        Objects.requireNonNull(counts, field);
        EnumMap<E, Long> copy = new EnumMap<>(type);
        counts.forEach((k, v) -> copy.put(Objects.requireNonNull(k, field + " key"), nonNegative(field + "[" + k + "]", v)));
        return Collections.unmodifiableMap(copy);
    }

    static long nonNegative(String field, long v) {
        if (v < 0) {
            throw new IllegalArgumentException(field + " must be >= 0, got " + v);
        }
        return v;
    }
}
