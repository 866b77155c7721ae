package orbitkv.conformance.membership;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import orbitkv.membership.MembershipEvent;

/** Records membership events with the monotonic time they arrived (test listener; bounded to 10,000). */
final class EventLog implements Consumer<MembershipEvent> {
    record Entry(long atNanos, MembershipEvent event) {}

    private final List<Entry> entries = new ArrayList<>();

    @Override
    public synchronized void accept(MembershipEvent e) {
        if (entries.size() >= 10_000) {
            throw new IllegalStateException("test event log bound of 10000 exceeded");
        }
        entries.add(new Entry(System.nanoTime(), e));
    }

    synchronized List<Entry> entries() {
        return List.copyOf(entries);
    }

    synchronized <T extends MembershipEvent> Optional<Entry> first(Class<T> type) {
        return entries.stream().filter(en -> type.isInstance(en.event())).findFirst();
    }

    synchronized <T extends MembershipEvent> Optional<Entry> firstAfter(Class<T> type, long afterNanos) {
        return entries.stream().filter(en -> type.isInstance(en.event()) && en.atNanos() - afterNanos > 0).findFirst();
    }
}
