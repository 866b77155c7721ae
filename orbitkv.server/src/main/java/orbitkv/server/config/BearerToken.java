package orbitkv.server.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.Set;

/**
 * The bearer token of the mutating HTTP endpoints ({@code --http-token-file}; docs/operations.md, security
 * posture). Read once from a file so the secret is not on the command line (visible in {@code ps}); only
 * its SHA-256 digest is kept. {@link #matches} compares digests with {@link MessageDigest#isEqual}, so
 * neither the position of the first differing byte nor the presented length shows in the timing.
 *
 * <p>File rules, checked at startup: at most {@link #FILE_BYTES_MAX} bytes, one line (a final newline is
 * dropped), {@link #TOKEN_CHARS_MIN}..{@link #TOKEN_CHARS_MAX} characters of RFC 6750's {@code b64token}
 * alphabet, and (where POSIX permissions exist) not readable or writable by others.
 */
public final class BearerToken {
    public static final int FILE_BYTES_MAX = 4096;
    public static final int TOKEN_CHARS_MIN = 16;
    public static final int TOKEN_CHARS_MAX = 1024;
    private static final String SCHEME = "bearer ";

    private final byte[] digest;

    private BearerToken(byte[] digest) {
        this.digest = digest;
    }

    /** The token of {@code text} (tests and the loader). */
    static BearerToken of(String text) {
        return new BearerToken(sha256(text));
    }

    /**
     * Loads the token file of {@code --http-token-file}.
     *
     * @throws ConfigException naming {@code --http-token-file} and the rule broken
     */
    public static BearerToken read(Path file) {
        return read(Setting.HTTP_TOKEN_FILE, file);
    }

    /**
     * Loads the token file of {@code setting} ({@code --http-token-file} or {@code --http-read-token-file}: the
     * same file rules for both).
     *
     * @throws ConfigException naming the option and the rule broken
     */
    public static BearerToken read(Setting setting, Path file) {
        String option = setting.flag() + " " + file;
        byte[] bytes;
        try {
            if (!Files.isRegularFile(file)) {
                throw new ConfigException(option + " is not a regular file");
            }
            if (Files.size(file) > FILE_BYTES_MAX) {
                throw new ConfigException(option + " is larger than " + FILE_BYTES_MAX + " bytes");
            }
            PosixFileAttributeView posix = Files.getFileAttributeView(file, PosixFileAttributeView.class);
            if (posix != null) {
                Set<PosixFilePermission> perms = posix.readAttributes().permissions();
                if (perms.contains(PosixFilePermission.OTHERS_READ) || perms.contains(PosixFilePermission.OTHERS_WRITE)
                        || perms.contains(PosixFilePermission.GROUP_WRITE)) {
                    throw new ConfigException(option + " is accessible by others (" + PosixFilePermissions.toString(perms)
                            + "): make it readable by the Manager's user only (chmod 600)");
                }
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ConfigException(option + " cannot be read: " + e);
        }
        String text = new String(bytes, StandardCharsets.US_ASCII);
        if (text.endsWith("\r\n")) {
            text = text.substring(0, text.length() - 2);
        } else if (text.endsWith("\n")) {
            text = text.substring(0, text.length() - 1);
        }
        if (text.length() < TOKEN_CHARS_MIN || text.length() > TOKEN_CHARS_MAX) {
            throw new ConfigException(option + " must hold one token of " + TOKEN_CHARS_MIN + ".." + TOKEN_CHARS_MAX
                    + " characters, got " + text.length());
        }
        for (int i = 0; i < text.length(); i++) {
            if (!isTokenChar(text.charAt(i), i, text)) {
                throw new ConfigException(option + ": the token may contain only A-Z a-z 0-9 - . _ ~ + / (and trailing =),"
                        + " found a byte 0x" + Integer.toHexString(bytes[i] & 0xFF) + " at index " + i);
            }
        }
        return of(text);
    }

    /** True iff {@code authorization} is {@code Bearer <this token>} (scheme case-insensitive). */
    public boolean matches(String authorization) {
        if (authorization == null || authorization.length() <= SCHEME.length()
                || !authorization.substring(0, SCHEME.length()).toLowerCase(Locale.ROOT).equals(SCHEME)) {
            return false;
        }
        return MessageDigest.isEqual(digest, sha256(authorization.substring(SCHEME.length()).strip()));
    }

    /** True iff both hold the same token (compared in constant time, as {@link #matches}). */
    public boolean sameSecret(BearerToken other) {
        return MessageDigest.isEqual(digest, other.digest);
    }

    private static boolean isTokenChar(char c, int i, String text) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "-._~+/".indexOf(c) >= 0) {
            return true;
        }
        return c == '=' && text.substring(i).chars().allMatch(x -> x == '='); // padding only at the end
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    /** Never prints the token or its digest. */
    @Override
    public String toString() {
        return "BearerToken[redacted]";
    }
}
