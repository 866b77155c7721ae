package orbitkv.transfer.frame;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/** A lock-free counter per constant of a closed enum (a metric's whole label set). */
public final class EnumCounter<E extends Enum<E>> {
    private final Class<E> type;
    private final AtomicLongArray counts;

    public EnumCounter(Class<E> type) {
        this.type = type;
        this.counts = new AtomicLongArray(type.getEnumConstants().length);
    }

    public void add(E e, long n) {
        counts.addAndGet(e.ordinal(), n);
    }

    public void increment(E e) {
        counts.incrementAndGet(e.ordinal());
    }

    public long get(E e) {
        return counts.get(e.ordinal());
    }

    public Map<E, Long> snapshot() {
        EnumMap<E, Long> m = new EnumMap<>(type);
        for (E e : type.getEnumConstants()) {
            m.put(e, counts.get(e.ordinal()));
        }
        return m;
    }
}
