package orbitkv.inventory.session;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Thread-safe counts per constant of one enum: bounded by the enum, snapshot as a map of the non-zero ones. */
final class EnumCounter<E extends Enum<E>> {
    private final Class<E> type;
    private final LongAdder[] counts;

    EnumCounter(Class<E> type) {
        this.type = type;
        this.counts = new LongAdder[type.getEnumConstants().length];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    void add(E key, long n) {
        counts[key.ordinal()].add(n);
    }

    void inc(E key) {
        counts[key.ordinal()].increment();
    }

    Map<E, Long> snapshot() {
        Map<E, Long> out = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            long n = counts[e.ordinal()].sum();
            if (n != 0) {
                out.put(e, n);
            }
        }
        return out;
    }
}
