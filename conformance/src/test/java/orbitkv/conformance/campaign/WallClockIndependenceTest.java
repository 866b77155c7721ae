package orbitkv.conformance.campaign;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.MemberRefEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Wall-clock jumps cannot move a deadline (issue 17 item 2; MEM-8, IDX-12): every read of the wall clock
 * in the production modules' bytecode is listed below with why it is not a deadline, and nothing else reads
 * it. Lease fences, freshness, await timeouts, liveness, ACK cadence, coalescing windows, retry backoff and
 * heal pacing therefore all run on {@code System.nanoTime()} (or an injected monotonic clock), which a
 * wall-clock jump does not move.
 *
 * <p>Why a scan and not a jump: Linux time namespaces offset only CLOCK_MONOTONIC and CLOCK_BOOTTIME
 * ({@code unshare --time --monotonic/--boottime}); CLOCK_REALTIME is global, so one process's wall clock
 * cannot be shifted here without moving every process on the shared machine. An LD_PRELOAD shim was tried:
 * under Debian's libfaketime 0.9.10 (FAKETIME_DONT_FAKE_MONOTONIC=1) a JDK 25 JVM's {@code Object.wait(300)} and
 * {@code LockSupport.parkNanos(300 ms)} return at once, even with no offset (its pthread_cond_timedwait
 * interception breaks the JVM's monotonic condition variables), so a Manager under it would spin and prove
 * nothing about its deadlines. The scan covers every class of the six orbitkv modules, method references and
 * lambdas included (it reads the constant pools); the libraries (gRPC deadlines, Netty timers, Vert.x) keep
 * their own timers on {@code nanoTime}, which this test does not check.
 */
@Tag("unit")
class WallClockIndependenceTest {
    /** Wall-clock APIs (owner.method). */
    private static final Set<String> WALL_CLOCK = Set.of("java/lang/System.currentTimeMillis", "java/time/Instant.now",
            "java/time/Clock.systemUTC", "java/time/Clock.systemDefaultZone", "java/time/Clock.millis", "java/time/Clock.instant",
            "java/time/LocalDateTime.now", "java/time/ZonedDateTime.now", "java/time/OffsetDateTime.now",
            "java/time/LocalDate.now", "java/time/LocalTime.now", "java/util/Date.<init>", "java/util/Calendar.getInstance");

    /** Every class allowed to read the wall clock, and why that read is no deadline. */
    private static final Map<String, String> ALLOWED = Map.of(
            "orbitkv/membership/etcd/Registrar", "issued_unix_ms of an epoch record: persisted for the inactive-node policy (MEM-5), compared across hosts and restarts, never a deadline",
            "orbitkv/membership/etcd/EtcdMembershipAdmin", "prune-epochs --inactive-for: the age of issued_unix_ms, an operator policy over days, not a runtime deadline",
            "orbitkv/membership/etcd/BackupFile", "the time written into an admin backup file",
            "orbitkv/recovery/trace/TraceFile", "timestamps of route trace records (diagnostics)",
            "orbitkv/server/tier/TierInstance", "'started' in the SSD lock file (diagnostics for an operator reading a refusal)");

    @Test
    @DisplayName("MEM-8 IDX-12 no deadline reads the wall clock: its only readers in the production bytecode are the listed, justified ones")
    void onlyJustifiedWallClockReaders() throws Exception {
        Path root = Path.of(System.getProperty("orbitkv.root", "..")).toAbsolutePath().normalize();
        Map<String, Set<String>> found = new TreeMap<>();
        int classes = 0;
        for (String module : new String[] {"orbitkv.membership", "orbitkv.inventory", "orbitkv.index", "orbitkv.transfer",
                "orbitkv.recovery", "orbitkv.server"}) {
            Path dir = root.resolve(module).resolve("target/classes");
            assertThat(dir).as("compiled classes of " + module).isDirectory();
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.filter(x -> x.toString().endsWith(".class")).toList()) {
                    classes++;
                    ClassModel cm = ClassFile.of().parse(Files.readAllBytes(p));
                    for (PoolEntry e : cm.constantPool()) {
                        if (e instanceof MemberRefEntry m) {
                            String api = m.owner().asInternalName() + "." + m.name().stringValue();
                            if (WALL_CLOCK.contains(api)) {
                                found.computeIfAbsent(cm.thisClass().asInternalName(), k -> new TreeSet<>()).add(api);
                            }
                        }
                    }
                }
            }
        }
        System.out.println("wall-clock readers among " + classes + " production classes: " + found);
        assertThat(classes).as("classes scanned").isGreaterThan(300);
        assertThat(found.keySet()).as("a new wall-clock reader needs a justification here (and must not be a deadline)")
                .isEqualTo(ALLOWED.keySet());
        for (String deadline : new String[] {"orbitkv/membership/etcd/FenceDeadline", "orbitkv/membership/etcd/EtcdMembership",
                "orbitkv/server/runtime/IncarnationHealer", "orbitkv/server/http/AwaitRegistry", "orbitkv/membership/RetryBackoff"}) {
            assertThat(found).as(deadline).doesNotContainKey(deadline);
        }
    }
}
