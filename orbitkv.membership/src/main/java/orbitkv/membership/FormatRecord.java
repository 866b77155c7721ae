package orbitkv.membership;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.UUID;

/**
 * The canonical value of the format guard {@code /orbitkv/v2/<cluster>/format} (MEM-1): exactly the two
 * lines {@code protocol = orbitkv/inventory-stream/v4} and {@code cluster_uuid = <uuid>}, each ended by
 * {@code \n}, UTF-8, nothing else. Registration compares this exact byte string (MEM-2), so any other
 * value, including an older binary's record, is a different format and is refused (MEM-3).
 *
 * @param clusterUuid the persistent random cluster UUID
 */
public record FormatRecord(UUID clusterUuid) {
    public FormatRecord {
        Objects.requireNonNull(clusterUuid, "cluster_uuid must not be null");
    }

    /** A new record with a random cluster UUID ({@code orbitkv admin format}). */
    public static FormatRecord random() {
        return new FormatRecord(UUID.randomUUID());
    }

    /** The canonical text. */
    public String encode() {
        return "protocol = " + ClusterIdentity.PROTOCOL + "\ncluster_uuid = " + clusterUuid + "\n";
    }

    public byte[] encodeUtf8() {
        return encode().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The record iff {@code value} is exactly a canonical v4 format value; otherwise null (the value
     * belongs to another format, e.g. an older binary's).
     */
    public static FormatRecord parseCanonicalOrNull(String value) {
        if (value == null) {
            return null;
        }
        String head = "protocol = " + ClusterIdentity.PROTOCOL + "\ncluster_uuid = ";
        if (!value.startsWith(head) || !value.endsWith("\n")) {
            return null;
        }
        String uuid = value.substring(head.length(), value.length() - 1);
        try {
            UUID parsed = UUID.fromString(uuid);
            FormatRecord r = new FormatRecord(parsed);
            return r.encode().equals(value) ? r : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * The {@code cluster_uuid = <uuid>} line of any line-oriented format value (an older binary's record
     * carries one too), or null. Cutover keeps the cluster's UUID when the old record has one.
     */
    public static UUID clusterUuidLineOrNull(String value) {
        if (value == null) {
            return null;
        }
        for (String line : value.split("\n", -1)) {
            String s = line.strip();
            if (s.startsWith("cluster_uuid")) {
                int eq = s.indexOf('=');
                if (eq > 0) {
                    try {
                        return UUID.fromString(s.substring(eq + 1).strip());
                    } catch (IllegalArgumentException e) {
                        return null;
                    }
                }
            }
        }
        return null;
    }
}
