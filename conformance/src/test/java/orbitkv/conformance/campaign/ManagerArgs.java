package orbitkv.conformance.campaign;

import java.util.List;

/** Manager options shared by the campaign's real-process tests. */
final class ManagerArgs {
    private ManagerArgs() {}

    /**
     * Bounds that fit a 192–256 MiB heap and the direct-memory default (a Manager refuses bounds beyond its JVM
     * limits): 64 MiB base + 8 MiB journal + 32 MiB index + 64 × 64 KiB JSON bodies = 108 MiB heap, 64 + 16 MiB
     * direct.
     */
    static final List<String> SMALL_BOUNDS = List.of("--journal-retention-bytes-max", "8MiB", "--index-budget-bytes", "32MiB",
            "--restore-bytes-in-flight-max", "16MiB", "--http-requests-in-flight-max", "64");
}
