package orbitkv.conformance.perf;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Linux {@code /proc} readings of the harness processes (design <em>Diagnostics</em>: CPU/RSS; the isolation contract's
 * per-thread CPU ticks and context switches, with {@code schedstat} runtime / run-queue wait / timeslices where the
 * kernel has it). Clock ticks are converted with {@code CLK_TCK} = 100 (the Linux user-space constant on x86-64).
 */
public final class ProcStat {
    /** USER_HZ of Linux on x86-64 and arm64. */
    static final double TICKS_PER_SECOND = 100.0;

    private ProcStat() {}

    /**
     * One process: CPU ticks (utime + stime), resident set and its high-water mark, threads.
     *
     * @param cpuTicks utime + stime of all threads, live and exited, in clock ticks
     */
    public record ProcessSample(long pid, long monoNanos, long cpuTicks, long rssBytes, long rssPeakBytes, int threads) {
        /** Core-seconds between {@code before} and this sample. */
        public double coreSecondsSince(ProcessSample before) {
            return (cpuTicks - before.cpuTicks) / TICKS_PER_SECOND;
        }

        /** Cores busy on average between {@code before} and this sample. */
        public double coresBusySince(ProcessSample before) {
            double s = (monoNanos - before.monoNanos) / 1e9;
            return s <= 0 ? Double.NaN : coreSecondsSince(before) / s;
        }
    }

    /** Reads {@code /proc/PID/stat} and {@code /proc/PID/status}; throws if the process is gone. */
    public static ProcessSample process(long pid) {
        String p = Long.toString(pid);
        long now = System.nanoTime();
        String[] f = statFields(read(Path.of("/proc", p, "stat")));
        Map<String, String> status = status(read(Path.of("/proc", p, "status")));
        return new ProcessSample(pid, now, Long.parseLong(f[11]) + Long.parseLong(f[12]), kib(status.get("VmRSS")),
                kib(status.get("VmHWM")), Integer.parseInt(status.getOrDefault("Threads", "0").strip()));
    }

    /**
     * One thread at one instant.
     *
     * @param utimeTicks user CPU, clock ticks
     * @param stimeTicks system CPU, clock ticks
     * @param voluntarySwitches voluntary context switches
     * @param involuntarySwitches involuntary (preempted) context switches
     * @param runNanos schedstat: time on a CPU ({@code -1} without schedstat)
     * @param waitNanos schedstat: time runnable but waiting on a run queue ({@code -1} without schedstat)
     * @param timeslices schedstat: timeslices run ({@code -1} without schedstat)
     */
    public record ThreadSample(int tid, String name, long utimeTicks, long stimeTicks, long voluntarySwitches,
            long involuntarySwitches, long runNanos, long waitNanos, long timeslices) {
        long cpuTicks() {
            return utimeTicks + stimeTicks;
        }
    }

    /** Every live thread of {@code pid} now (threads that exit while being read are skipped: they are not live). */
    public static Map<Integer, ThreadSample> threads(long pid) {
        Map<Integer, ThreadSample> out = new TreeMap<>();
        Path task = Path.of("/proc", Long.toString(pid), "task");
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(task)) {
            for (Path d : dirs) {
                try {
                    int tid = Integer.parseInt(d.getFileName().toString());
                    String stat = Files.readString(d.resolve("stat"));
                    String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                    String[] f = statFields(stat);
                    Map<String, String> st = status(Files.readString(d.resolve("status")));
                    long run = -1;
                    long wait = -1;
                    long slices = -1;
                    Path sched = d.resolve("schedstat");
                    if (Files.exists(sched)) {
                        String[] s = Files.readString(sched).strip().split("\\s+");
                        if (s.length >= 3) {
                            run = Long.parseLong(s[0]);
                            wait = Long.parseLong(s[1]);
                            slices = Long.parseLong(s[2]);
                        }
                    }
                    out.put(tid, new ThreadSample(tid, name, Long.parseLong(f[11]), Long.parseLong(f[12]),
                            Long.parseLong(st.getOrDefault("voluntary_ctxt_switches", "0").strip()),
                            Long.parseLong(st.getOrDefault("nonvoluntary_ctxt_switches", "0").strip()), run, wait, slices));
                } catch (NoSuchFileException gone) {
                    // the thread exited between the listing and the read: not live
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + task + ": " + e, e);
        }
        return out;
    }

    /**
     * Per-thread deltas between two snapshots, grouped by thread name with trailing digits and separators dropped
     * (so {@code grpc-default-worker-ELG-3-1} and {@code -3-2} add up). Surviving threads contribute their
     * difference; threads new in {@code after} contribute their whole counts (they started inside the interval);
     * threads gone in {@code after} are counted as exited and contribute nothing, since their last counts are
     * unknown (never counted as zero, design <em>context-switch snapshots</em>).
     */
    public record ThreadDeltas(int surviving, int started, int exited, boolean schedstat, Map<String, Group> groups) {
        /** Sums over all groups. */
        public Group total() {
            Group t = new Group(0, 0, 0, 0, 0, 0, 0);
            for (Group g : groups.values()) {
                t = t.plus(g);
            }
            return t;
        }

        /** CSV rows {@code group,threads,cpu_ticks,voluntary,involuntary,run_ns,wait_ns,timeslices}. */
        public List<String> csv(String prefix) {
            List<String> rows = new ArrayList<>();
            groups.forEach((name, g) -> rows.add(prefix + "," + name + "," + g.threads() + "," + g.cpuTicks() + "," + g.voluntary() + ","
                    + g.involuntary() + "," + g.runNanos() + "," + g.waitNanos() + "," + g.timeslices()));
            return rows;
        }
    }

    /** The summed deltas of one thread-name group. */
    public record Group(int threads, long cpuTicks, long voluntary, long involuntary, long runNanos, long waitNanos, long timeslices) {
        Group plus(Group o) {
            return new Group(threads + o.threads, cpuTicks + o.cpuTicks, voluntary + o.voluntary, involuntary + o.involuntary,
                    runNanos + o.runNanos, waitNanos + o.waitNanos, timeslices + o.timeslices);
        }
    }

    /** The deltas from {@code before} to {@code after} (see {@link ThreadDeltas}). */
    public static ThreadDeltas delta(Map<Integer, ThreadSample> before, Map<Integer, ThreadSample> after) {
        Map<String, Group> groups = new TreeMap<>();
        int surviving = 0;
        int started = 0;
        boolean sched = true;
        for (ThreadSample a : after.values()) {
            ThreadSample b = before.get(a.tid());
            Group g;
            if (b != null && b.name().equals(a.name())) {
                surviving++;
                g = new Group(1, a.cpuTicks() - b.cpuTicks(), a.voluntarySwitches() - b.voluntarySwitches(),
                        a.involuntarySwitches() - b.involuntarySwitches(), diff(a.runNanos(), b.runNanos()),
                        diff(a.waitNanos(), b.waitNanos()), diff(a.timeslices(), b.timeslices()));
            } else {
                started++;
                g = new Group(1, a.cpuTicks(), a.voluntarySwitches(), a.involuntarySwitches(), Math.max(0, a.runNanos()),
                        Math.max(0, a.waitNanos()), Math.max(0, a.timeslices()));
            }
            sched &= a.runNanos() >= 0;
            groups.merge(groupName(a.name()), g, Group::plus);
        }
        int exited = 0;
        for (ThreadSample b : before.values()) {
            ThreadSample a = after.get(b.tid());
            if (a == null || !a.name().equals(b.name())) {
                exited++;
            }
        }
        return new ThreadDeltas(surviving, started, exited, sched, new LinkedHashMap<>(groups));
    }

    static String groupName(String thread) {
        String g = thread.replaceAll("([-_#/ .:]*\\d+)+$", "");
        return g.isEmpty() ? thread : g;
    }

    private static long diff(long a, long b) {
        return a < 0 || b < 0 ? 0 : a - b;
    }

    /** The fields after the command name of a stat line; index 11 = utime, 12 = stime (stat fields 14, 15). */
    private static String[] statFields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).strip().split(" ");
    }

    private static Map<String, String> status(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int c = line.indexOf(':');
            if (c > 0) {
                m.put(line.substring(0, c), line.substring(c + 1).strip());
            }
        }
        return m;
    }

    private static long kib(String v) {
        if (v == null) {
            return -1;
        }
        return Long.parseLong(v.replace("kB", "").strip()) * 1024;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + p + ": " + e, e);
        }
    }
}
