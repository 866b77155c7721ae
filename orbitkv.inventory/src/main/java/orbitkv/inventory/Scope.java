package orbitkv.inventory;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * A requester's subscription set (IDX-4): every namespace, or an exact sorted unique list of at most
 * {@value #MAX_NAMESPACES} namespaces. An empty list subscribes to nothing, never to all (SES-8).
 */
public sealed interface Scope permits Scope.AllNamespaces, Scope.NamespaceList {
    /** Maximum number of namespaces in an explicit scope (DESIGN §9). */
    int MAX_NAMESPACES = 256;

    /** Domain-separation prefix of the digest encoding (SES-7); followed by a 0x00 byte. */
    String DIGEST_DOMAIN = "orbitkv.scope-digest";

    /** Version byte of the digest encoding. */
    byte DIGEST_VERSION = 1;

    /** True iff records of {@code namespace} belong to this scope. */
    boolean contains(Namespace namespace);

    /** The canonical digest (SES-7); the exact encoding is in docs/protocol.md. */
    default ScopeDigest digest() {
        return new ScopeDigest(sha256(canonicalEncoding()));
    }

    /**
     * The canonical encoding the digest is taken over: {@code "orbitkv.scope-digest" 0x00 version kind}
     * followed, for a list, by {@code u32be count} and per namespace {@code u32be length, bytes}.
     */
    byte[] canonicalEncoding();

    /** Every namespace. */
    static Scope all() {
        return AllNamespaces.INSTANCE;
    }

    /** The canonical (sorted, deduplicated) explicit scope of {@code namespaces}. */
    static NamespaceList of(Collection<Namespace> namespaces) {
        Objects.requireNonNull(namespaces, "scope namespaces must not be null");
        TreeSet<Namespace> sorted = new TreeSet<>();
        for (Namespace n : namespaces) {
            sorted.add(Objects.requireNonNull(n, "scope namespace must not be null"));
        }
        return new NamespaceList(List.copyOf(sorted));
    }

    /** The explicit empty scope: subscribes to nothing (SES-8). */
    static NamespaceList none() {
        return new NamespaceList(List.of());
    }

    /** All namespaces. */
    enum AllNamespaces implements Scope {
        INSTANCE;

        static final byte KIND = 0;

        @Override
        public boolean contains(Namespace namespace) {
            return true;
        }

        @Override
        public byte[] canonicalEncoding() {
            ByteArrayOutputStream out = header(KIND);
            return out.toByteArray();
        }

        @Override
        public String toString() {
            return "AllNamespaces";
        }
    }

    /**
     * An exact list, already canonical: strictly increasing (sorted, no duplicates), at most
     * {@value Scope#MAX_NAMESPACES} entries. Use {@link Scope#of} to canonicalize arbitrary input.
     *
     * @param namespaces the namespaces in unsigned lexicographic order
     */
    record NamespaceList(List<Namespace> namespaces) implements Scope {
        static final byte KIND = 1;

        public NamespaceList {
            Objects.requireNonNull(namespaces, "scope namespaces must not be null");
            namespaces = List.copyOf(namespaces);
            if (namespaces.size() > MAX_NAMESPACES) {
                throw new IllegalArgumentException(
                        "scope may list at most " + MAX_NAMESPACES + " namespaces, got " + namespaces.size());
            }
            for (int i = 1; i < namespaces.size(); i++) {
                if (namespaces.get(i - 1).compareTo(namespaces.get(i)) >= 0) {
                    throw new IllegalArgumentException(
                            "scope namespaces must be sorted and unique; index " + i + " is not greater than index " + (i - 1));
                }
            }
        }

        @Override
        public boolean contains(Namespace namespace) {
            return java.util.Collections.binarySearch(namespaces, namespace) >= 0;
        }

        public boolean isEmpty() {
            return namespaces.isEmpty();
        }

        @Override
        public byte[] canonicalEncoding() {
            ByteArrayOutputStream out = header(KIND);
            writeU32(out, namespaces.size());
            for (Namespace n : namespaces) {
                writeU32(out, n.length());
                out.writeBytes(n.bytes());
            }
            return out.toByteArray();
        }
    }

    private static ByteArrayOutputStream header(byte kind) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(DIGEST_DOMAIN.getBytes(StandardCharsets.US_ASCII));
        out.write(0);
        out.write(DIGEST_VERSION);
        out.write(kind);
        return out;
    }

    private static void writeU32(ByteArrayOutputStream out, int v) {
        out.write(v >>> 24);
        out.write(v >>> 16);
        out.write(v >>> 8);
        out.write(v);
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java SE runtime", e);
        }
    }
}
