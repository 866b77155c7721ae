package orbitkv.server.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import orbitkv.server.config.ManagerConfig;

/**
 * Checks at start that the configured bounds fit the JVM's memory limits (issue 20 item 4: memory has a
 * bound that holds). The launcher bakes conservative limits into the image ({@code -Xmx1g
 * -XX:MaxDirectMemorySize=1g}, dist/pom.xml); an operator raises them with {@code JDK_JAVA_OPTIONS}
 * (docs/operations.md). A Manager whose bounds do not fit refuses to start, naming the options on both
 * sides, instead of failing later with an OutOfMemoryError under load.
 *
 * <p>What each limit must hold (payload bytes are in neither: the DRAM arena is a mapped tmpfs file, saves
 * stream into it, the SSD writer reads from it):
 * <ul>
 *   <li>Heap: {@value #HEAP_BASE_MIB} MiB for the process itself, the journal retention
 *       ({@code --journal-retention-bytes-max}), the GlobalIndex budget ({@code --index-budget-bytes},
 *       distributed only), and buffered JSON bodies ({@code --json-body-bytes-max} ×
 *       {@code --http-requests-in-flight-max}).</li>
 *   <li>Direct memory: {@value #DIRECT_BASE_MIB} MiB for network buffers (HTTP and gRPC codecs, bounded by
 *       their frame limits) and restore responses ({@code --restore-bytes-in-flight-max}).</li>
 * </ul>
 */
public final class MemoryBudget {
    /** Heap the process needs besides its configured bounds (classes, Netty, gRPC, Jackson, small state). */
    static final long HEAP_BASE_MIB = 64;
    /** Direct memory the network codecs need besides restore responses. */
    static final long DIRECT_BASE_MIB = 64;
    private static final long MIB = 1024 * 1024;

    private MemoryBudget() {}

    /** The JVM's limits: {@code Runtime.maxMemory()} and Netty's view of the direct-memory limit. */
    public static Optional<String> refusal(ManagerConfig config) {
        return refusal(config, Runtime.getRuntime().maxMemory(), io.netty.util.internal.PlatformDependent.maxDirectMemory());
    }

    /** The refusal message if the bounds of {@code config} do not fit {@code heapMax} / {@code directMax}; else empty. */
    static Optional<String> refusal(ManagerConfig config, long heapMax, long directMax) {
        List<String> problems = new ArrayList<>(2);
        long journal = config.inventory().journalRetentionBytesMax();
        long index = config.standalone() ? 0 : config.index().indexBudgetBytes();
        long json = config.http().jsonBodyBytesMax() * config.http().requestsInFlightMax();
        long heapNeed = HEAP_BASE_MIB * MIB + journal + index + json;
        if (heapNeed > heapMax) {
            problems.add("the heap limit is " + mib(heapMax) + " but the configured bounds need " + mib(heapNeed)
                    + " (" + HEAP_BASE_MIB + " MiB base + --journal-retention-bytes-max " + mib(journal)
                    + (config.standalone() ? "" : " + --index-budget-bytes " + mib(index))
                    + " + --json-body-bytes-max x --http-requests-in-flight-max " + mib(json) + ")");
        }
        long restore = config.tiers().restoreBytesInFlightMax();
        long directNeed = DIRECT_BASE_MIB * MIB + restore;
        if (directNeed > directMax) {
            problems.add("the direct-memory limit is " + mib(directMax) + " but the configured bounds need "
                    + mib(directNeed) + " (" + DIRECT_BASE_MIB + " MiB base + --restore-bytes-in-flight-max "
                    + mib(restore) + ")");
        }
        if (problems.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(String.join("; ", problems) + ": lower those options, or raise the JVM limits, e.g."
                + " JDK_JAVA_OPTIONS='-Xmx" + ceilMib(heapNeed) + "m -XX:MaxDirectMemorySize=" + ceilMib(directNeed)
                + "m' (docs/operations.md, memory)");
    }

    private static String mib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) MIB);
    }

    private static long ceilMib(long bytes) {
        return (bytes + MIB - 1) / MIB;
    }
}
