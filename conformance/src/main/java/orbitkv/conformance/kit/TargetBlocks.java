package orbitkv.conformance.kit;

import java.util.List;
import java.util.Map;

/**
 * How the kit gives the target's source rows to bootstrap (issue 34 item 6): a Manager saves blocks through API v1
 * ({@code /cache/save}, {@code /cache/evict}); the in-process target puts residences into its source.
 */
interface TargetBlocks {
    /** Saves {@code blocks} (key hex → payload) into {@code namespace}; returns how many were saved. */
    int save(String namespace, Map<String, byte[]> blocks);

    /** Evicts {@code keys} (hex) of {@code namespace} from every medium. */
    void evict(String namespace, List<String> keys);
}
