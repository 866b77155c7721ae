package orbitkv.index.view;

import java.util.concurrent.ConcurrentHashMap;
import orbitkv.inventory.Namespace;

/**
 * Interns namespaces to small ids so rows store 4 bytes instead of the namespace bytes. Append-only and
 * bounded by {@link #NAMESPACES_MAX}; beyond it records are refused (over budget), never dropped.
 */
final class NamespaceTable {
    /** At most this many distinct namespaces (an explicit scope allows 256; AllNamespaces is bounded here). */
    static final int NAMESPACES_MAX = 1 << 16;

    private final ConcurrentHashMap<Namespace, Integer> ids = new ConcurrentHashMap<>();

    /** The id of {@code ns}, or -1 if it was never interned. */
    int find(Namespace ns) {
        Integer id = ids.get(ns);
        return id == null ? -1 : id;
    }

    /** The id of {@code ns}, interning it; -1 when the table is full. */
    int intern(Namespace ns) {
        Integer id = ids.get(ns);
        if (id != null) {
            return id;
        }
        synchronized (this) {
            id = ids.get(ns);
            if (id != null) {
                return id;
            }
            if (ids.size() >= NAMESPACES_MAX) {
                return -1;
            }
            int next = ids.size();
            ids.put(ns, next);
            return next;
        }
    }
}
