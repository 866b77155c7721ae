package orbitkv.transfer;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/** Immutable, enum-ordered copies of counter maps for the status records. */
final class EnumCounts {
    private EnumCounts() {}

    static <E extends Enum<E>> Map<E, Long> copy(Class<E> type, Map<E, Long> counts) {
        EnumMap<E, Long> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, counts.getOrDefault(e, 0L));
        }
        return Collections.unmodifiableMap(m);
    }
}
