package orbitkv.transfer.requester;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import orbitkv.transfer.frame.HostIdentity;

/**
 * Source arenas mapped read-only by this requester (docs/transfer.md "Shared memory"), at most
 * {@code sharedArenasMappedMax} at once, least recently used unmapped first among those no READ is using.
 * Opening checks the file's (device, inode) against the grant's, so a requester in another mount namespace, or
 * a replaced arena file of the same name, is never mapped in its place.
 */
final class SharedArenas implements AutoCloseable {
    /** One mapped arena; {@link #segment} is valid until the mapping is unmapped (never while in use). */
    static final class Mapping {
        final IssuedGrant.ArenaRef ref;
        final MemorySegment segment;
        private final Arena arena;
        private int users;

        private Mapping(IssuedGrant.ArenaRef ref, MemorySegment segment, Arena arena) {
            this.ref = ref;
            this.segment = segment;
            this.arena = arena;
        }
    }

    /** Why an arena could not be mapped. */
    static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;

        Unavailable(String message) {
            super(message, null, false, false);
        }
    }

    private final int mappedMax;
    private final LinkedHashMap<IssuedGrant.ArenaRef, Mapping> mappings = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    SharedArenas(int mappedMax) {
        this.mappedMax = mappedMax;
    }

    /** The mapping of {@code ref}, mapped now if needed; the caller must {@link #release} it. */
    synchronized Mapping acquire(IssuedGrant.ArenaRef ref) throws Unavailable {
        if (closed) {
            throw new Unavailable("the engine is closed");
        }
        Mapping m = mappings.get(ref);
        if (m == null) {
            if (mappings.size() >= mappedMax && !evictOne()) {
                throw new Unavailable("sharedArenasMappedMax (" + mappedMax + ") arenas are mapped and in use");
            }
            m = map(ref);
            mappings.put(ref, m);
        }
        m.users++;
        return m;
    }

    synchronized void release(Mapping m) {
        if (m.users <= 0) {
            throw new IllegalStateException("arena " + m.ref.path() + " released more often than acquired");
        }
        m.users--;
        if (closed && m.users == 0) {
            m.arena.close();
        }
    }

    synchronized int mapped() {
        return mappings.size();
    }

    private boolean evictOne() {
        for (Iterator<Map.Entry<IssuedGrant.ArenaRef, Mapping>> it = mappings.entrySet().iterator(); it.hasNext(); ) {
            Mapping m = it.next().getValue();
            if (m.users == 0) {
                it.remove();
                m.arena.close();
                return true;
            }
        }
        return false;
    }

    private static Mapping map(IssuedGrant.ArenaRef ref) throws Unavailable {
        Path path = Path.of(ref.path());
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            HostIdentity.FileIdentity id = HostIdentity.of(path);
            if (id.device() != ref.device() || id.inode() != ref.inode()) {
                throw new Unavailable(path + " is not the source's arena (device/inode " + id.device() + "/" + id.inode()
                        + ", the grant names " + ref.device() + "/" + ref.inode() + ")");
            }
            long size = ch.size();
            if (size < ref.sizeBytes()) {
                throw new Unavailable(path + " has " + size + " bytes, the source named " + ref.sizeBytes());
            }
            // The mapping outlives the channel; it lives until the arena closes.
            return new Mapping(ref, ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena), arena);
        } catch (IOException | UnsupportedOperationException e) {
            arena.close();
            throw new Unavailable("cannot map " + path + ": " + e);
        } catch (Unavailable e) {
            arena.close();
            throw e;
        }
    }

    /** Unmaps every arena no READ uses; the others are unmapped by their last release. */
    @Override
    public synchronized void close() {
        closed = true;
        for (Mapping m : mappings.values()) {
            if (m.users == 0) {
                m.arena.close();
            }
        }
        mappings.clear();
    }
}
