package orbitkv.conformance.perf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The same-host validity check of measurement contract s2.10-performance-v2 (PERF-1): monotonic stamps of
 * different processes may be subtracted only when all of them run under the same boot (same
 * {@code /proc/sys/kernel/random/boot_id}) and the same Linux time namespace (same {@code /proc/PID/ns/time} inode)
 * with the same monotonic offsets ({@code /proc/PID/timens_offsets}). The harness checks itself and every Manager.
 */
public final class ClockDomain {
    private ClockDomain() {}

    /** What was checked: the boot id and the time namespace shared by all processes. */
    public record Domain(String bootId, String timeNamespace, String offsets, int processes) {
        public String describe() {
            return "boot_id " + bootId + ", time namespace " + timeNamespace + " (offsets " + offsets.replace('\n', ';')
                    + "), " + processes + " processes";
        }
    }

    /** The boot id of this host now. */
    public static String bootId() {
        return read(Path.of("/proc/sys/kernel/random/boot_id"));
    }

    /**
     * Checks this process and {@code pids}; throws naming the first process outside this process's clock domain.
     */
    public static Domain check(List<Long> pids) {
        String boot = bootId();
        String ns = timeNamespace("self");
        String off = offsets("self");
        List<String> bad = new ArrayList<>();
        for (long pid : pids) {
            String p = Long.toString(pid);
            if (!ns.equals(timeNamespace(p))) {
                bad.add("pid " + pid + " time namespace " + timeNamespace(p) + " != " + ns);
            } else if (!off.equals(offsets(p))) {
                bad.add("pid " + pid + " monotonic offsets " + offsets(p) + " != " + off);
            }
        }
        if (!bad.isEmpty()) {
            throw new IllegalStateException("clock domain check failed (samples of these processes are not comparable): " + bad);
        }
        return new Domain(boot, ns, off, pids.size() + 1);
    }

    /** Fails when the boot id changed since {@code before} (the stamps of the two boots are unrelated). */
    public static void requireSameBoot(Domain before) {
        String now = bootId();
        if (!now.equals(before.bootId())) {
            throw new IllegalStateException("boot id changed during the run: " + before.bootId() + " -> " + now);
        }
    }

    static String timeNamespace(String pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", pid, "ns", "time")).toString();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the time namespace of process " + pid + ": " + e, e);
        }
    }

    /** The monotonic and boottime offsets of the process's time namespace ("" where the kernel has no file). */
    static String offsets(String pid) {
        Path p = Path.of("/proc", pid, "timens_offsets");
        return Files.exists(p) ? read(p) : "";
    }

    private static String read(Path p) {
        try {
            return Files.readString(p).strip();
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + p + ": " + e, e);
        }
    }
}
