package orbitkv.inventory;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The 32-byte SHA-256 digest of a canonical {@link Scope} encoding (SES-7). The encoding is fixed in
 * {@code docs/protocol.md} and pinned by golden vectors in the conformance suite.
 *
 * @param bytes exactly 32 bytes; copied in and out
 */
public record ScopeDigest(byte[] bytes) {
    /** Width of the digest in bytes (SES-9: fixed widths). */
    public static final int BYTES = 32;

    public ScopeDigest {
        Objects.requireNonNull(bytes, "scope digest must not be null");
        if (bytes.length != BYTES) {
            throw new IllegalArgumentException("scope digest must be exactly " + BYTES + " bytes, got " + bytes.length);
        }
        bytes = bytes.clone();
    }

    /** Parses 64 hex characters (either case). */
    public static ScopeDigest ofHex(String hex) {
        Objects.requireNonNull(hex, "scope digest hex must not be null");
        if (hex.length() != 2 * BYTES) {
            throw new IllegalArgumentException(
                    "scope digest must be " + (2 * BYTES) + " hex characters, got " + hex.length());
        }
        try {
            return new ScopeDigest(HexFormat.of().parseHex(hex));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("scope digest is not hex: " + e.getMessage());
        }
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    public String hex() {
        return HexFormat.of().formatHex(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScopeDigest d && Arrays.equals(bytes, d.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return hex();
    }
}
