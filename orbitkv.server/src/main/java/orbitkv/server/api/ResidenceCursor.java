package orbitkv.server.api;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.Base64;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResidencePosition;
import orbitkv.inventory.StateKey;

/**
 * The opaque {@code cursor} / {@code next_cursor} of {@code GET /cache/metadata/residences}: the last listed
 * residence's position, as unpadded base64url of {@code u8 version (1) | u8 namespace_len (1..255) | namespace
 * | u8 key_len (1..64) | key | u8 medium (0 DRAM, 1 SSD)}. Clients pass it back unchanged; anything that does
 * not decode to exactly this canonical form is refused as {@code INVALID_QUERY_PARAMETER} (no state changes).
 */
public final class ResidenceCursor {
    private static final int VERSION = 1;
    /** The longest token: 4 + 255 + 64 bytes in base64 (431 characters); longer text is refused unread. */
    public static final int TOKEN_CHARS_MAX = 431;

    private ResidenceCursor() {}

    public static String encode(ResidencePosition p) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(VERSION);
        byte[] ns = p.key().namespace().bytes();
        out.write(ns.length);
        out.writeBytes(ns);
        byte[] key = p.key().key();
        out.write(key.length);
        out.writeBytes(key);
        out.write(p.medium() == Medium.DRAM ? 0 : 1);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(out.toByteArray());
    }

    /** Decodes a token from {@code next_cursor}; an {@link ApiException} names what is wrong. */
    public static ResidencePosition decode(String token) {
        if (token.isEmpty() || token.length() > TOKEN_CHARS_MAX) {
            throw refused(token, "must be 1.." + TOKEN_CHARS_MAX + " characters");
        }
        byte[] b;
        try {
            b = Base64.getUrlDecoder().decode(token);
        } catch (IllegalArgumentException e) {
            throw refused(token, "is not base64url");
        }
        if (b.length < 5 || (b[0] & 0xff) != VERSION) {
            throw refused(token, "is not a version " + VERSION + " cursor");
        }
        int nsLen = b[1] & 0xff;
        if (nsLen < 1 || 2 + nsLen >= b.length) {
            throw refused(token, "has a bad namespace length");
        }
        int keyAt = 2 + nsLen;
        int keyLen = b[keyAt] & 0xff;
        if (keyLen < 1 || keyLen > StateKey.MAX_KEY_BYTES || keyAt + 1 + keyLen + 1 != b.length) {
            throw refused(token, "has a bad key length");
        }
        int medium = b[b.length - 1] & 0xff;
        if (medium > 1) {
            throw refused(token, "names no medium");
        }
        ResidencePosition p = new ResidencePosition(new StateKey(new Namespace(Arrays.copyOfRange(b, 2, keyAt)),
                Arrays.copyOfRange(b, keyAt + 1, keyAt + 1 + keyLen)), medium == 0 ? Medium.DRAM : Medium.SSD);
        if (!encode(p).equals(token)) {
            throw refused(token, "is not canonical");
        }
        return p;
    }

    private static ApiException refused(String token, String why) {
        return new ApiException(ApiError.INVALID_QUERY_PARAMETER, "cursor " + JsonRequests.clip(token) + " " + why
                + ": pass back a next_cursor unchanged");
    }
}
