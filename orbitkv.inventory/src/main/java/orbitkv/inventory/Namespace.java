package orbitkv.inventory;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The representation-bound storage namespace: exact bytes, 1..255 of them (DESIGN §4). Not a model
 * name; equality is byte equality and order is unsigned lexicographic (IDX-4).
 *
 * @param bytes the namespace bytes; copied in and out
 */
public record Namespace(byte[] bytes) implements Comparable<Namespace> {
    /** Maximum namespace length in bytes. */
    public static final int MAX_BYTES = 255;

    public Namespace {
        Objects.requireNonNull(bytes, "namespace bytes must not be null");
        if (bytes.length == 0 || bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException(
                    "namespace must be 1.." + MAX_BYTES + " bytes, got " + bytes.length);
        }
        bytes = bytes.clone();
    }

    /** A namespace from the UTF-8 encoding of {@code text}. */
    public static Namespace utf8(String text) {
        return new Namespace(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** A copy of the namespace bytes. */
    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The length in bytes, without copying. */
    public int length() {
        return bytes.length;
    }

    /** The byte at {@code index}, without copying. */
    public byte byteAt(int index) {
        return bytes[index];
    }

    /**
     * Copies the bytes into {@code dst} at {@code offset}.
     *
     * @return the offset just past the copied bytes
     */
    public int copyInto(byte[] dst, int offset) {
        System.arraycopy(bytes, 0, dst, offset, bytes.length);
        return offset + bytes.length;
    }

    @Override
    public int compareTo(Namespace other) {
        return Arrays.compareUnsigned(bytes, other.bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Namespace n && Arrays.equals(bytes, n.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** Lowercase hex of the bytes (namespaces need not be UTF-8 on the wire). */
    @Override
    public String toString() {
        return "ns:" + HexFormat.of().formatHex(bytes);
    }
}
