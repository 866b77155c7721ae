package orbitkv.inventory.source;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import orbitkv.inventory.ResidenceOrder;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;

/**
 * Coalesces a contiguous input interval (PUB-1, PUB-6, PUB-7, PUB-8, DELTA-6): the last record per
 * {@code (StateKey, medium)} among the records in {@code scope}, in resident-map order. A final delete is
 * kept (the reader may never have seen the put); DRAM and SSD are different residences; each record keeps
 * its own sequence. Coverage is the caller's input interval, whatever survives. Pure; runs outside the
 * inventory lock.
 */
final class Coalescer {
    private Coalescer() {}

    /**
     * @param input journal records in sequence order
     * @param length use {@code input[0 .. length)}
     */
    static List<ResidenceRecord> coalesce(ResidenceRecord[] input, int length, Scope scope) {
        ResidenceRecord[] kept = new ResidenceRecord[length];
        int m = 0;
        for (int i = 0; i < length; i++) {
            if (scope.contains(input[i].key().namespace())) {
                kept[m++] = input[i];
            }
        }
        // Stable sort: records of one residence stay in sequence order, so the last of a run is the newest.
        Arrays.sort(kept, 0, m, ResidenceOrder.RECORDS);
        List<ResidenceRecord> out = new ArrayList<>(m);
        for (int i = 0; i < m; i++) {
            if (i + 1 == m || ResidenceOrder.compare(kept[i], kept[i + 1]) != 0) {
                out.add(kept[i]);
            }
        }
        return out;
    }
}
