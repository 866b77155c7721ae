package orbitkv.inventory;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * {@code (namespace, key)}: the identity of cached state (DESIGN §4). The key is exact bytes, 1..64 of
 * them (for example a chained block hash). Order: namespace, then key, both unsigned lexicographic.
 *
 * @param namespace the namespace
 * @param key the key bytes; copied in and out
 */
public record StateKey(Namespace namespace, byte[] key) implements Comparable<StateKey> {
    /** Maximum key length in bytes. */
    public static final int MAX_KEY_BYTES = 64;

    public StateKey {
        Objects.requireNonNull(namespace, "state key namespace must not be null");
        Objects.requireNonNull(key, "state key bytes must not be null");
        if (key.length == 0 || key.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException(
                    "state key must be 1.." + MAX_KEY_BYTES + " bytes, got " + key.length);
        }
        key = key.clone();
    }

    /** A copy of the key bytes. */
    @Override
    public byte[] key() {
        return key.clone();
    }

    /** The key length in bytes, without copying. */
    public int keyLength() {
        return key.length;
    }

    /**
     * Copies the key bytes into {@code dst} at {@code offset}.
     *
     * @return the offset just past the copied bytes
     */
    public int copyKeyInto(byte[] dst, int offset) {
        System.arraycopy(key, 0, dst, offset, key.length);
        return offset + key.length;
    }

    @Override
    public int compareTo(StateKey other) {
        int c = namespace.compareTo(other.namespace);
        return c != 0 ? c : Arrays.compareUnsigned(key, other.key);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StateKey k && namespace.equals(k.namespace) && Arrays.equals(key, k.key);
    }

    @Override
    public int hashCode() {
        return 31 * namespace.hashCode() + Arrays.hashCode(key);
    }

    /** Lowercase hex of the key bytes. */
    public String keyHex() {
        return HexFormat.of().formatHex(key);
    }

    @Override
    public String toString() {
        return namespace + "/" + keyHex();
    }
}
