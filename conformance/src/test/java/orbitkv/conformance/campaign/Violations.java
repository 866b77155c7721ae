package orbitkv.conformance.campaign;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/** Violations per property of one schedule; thread-safe, bounded to {@value #KEPT_PER_PROPERTY} messages per property. */
final class Violations {
    static final int KEPT_PER_PROPERTY = 20;
    private final Map<Property, Integer> counts = new EnumMap<>(Property.class);
    private final Map<Property, List<String>> messages = new EnumMap<>(Property.class);

    synchronized void add(Property p, String message) {
        counts.merge(p, 1, Integer::sum);
        List<String> m = messages.computeIfAbsent(p, k -> new ArrayList<>());
        if (m.size() < KEPT_PER_PROPERTY) {
            m.add(message);
        }
    }

    synchronized void addAll(Property p, List<String> list) {
        list.forEach(m -> add(p, m));
    }

    synchronized int total() {
        return counts.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** {@code {ordered=0,unique=0,...}} over every property. */
    synchronized String summary() {
        StringJoiner j = new StringJoiner(",", "{", "}");
        for (Property p : Property.values()) {
            j.add(p.label() + "=" + counts.getOrDefault(p, 0));
        }
        return j.toString();
    }

    synchronized String details() {
        StringBuilder b = new StringBuilder();
        messages.forEach((p, m) -> m.forEach(x -> b.append("  ").append(p.label()).append(": ").append(x).append('\n')));
        return b.toString();
    }
}
