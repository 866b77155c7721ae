package orbitkv.transfer.frame;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * The same-host handshake's facts (docs/transfer.md "Shared memory"): the kernel's boot id, equal exactly for
 * processes on one booted host, and the (device, inode, size) identity of an arena file, which a requester
 * checks after opening the path so it never maps another file of the same name (another mount namespace, a
 * replaced arena).
 */
public final class HostIdentity {
    /** The kernel's random boot id, fixed for the life of a boot. */
    public static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private HostIdentity() {}

    /** This host's boot id, or null if it cannot be read (then no shared-memory route is offered or taken). */
    public static UUID bootId() {
        try {
            return UUID.fromString(Files.readString(BOOT_ID).trim());
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    /** An arena file's identity. */
    public record FileIdentity(long device, long inode, long sizeBytes) {}

    /** The identity of {@code file} (following links), read through the {@code unix} attribute view. */
    public static FileIdentity of(Path file) throws IOException {
        Map<String, Object> a = Files.readAttributes(file, "unix:dev,ino,size");
        return new FileIdentity(((Number) a.get("dev")).longValue(), ((Number) a.get("ino")).longValue(),
                ((Number) a.get("size")).longValue());
    }
}
