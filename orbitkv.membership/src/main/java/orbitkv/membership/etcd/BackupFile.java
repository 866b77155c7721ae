package orbitkv.membership.etcd;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import orbitkv.membership.MembershipAdmin.KeyEntry;

/**
 * The backup of one cluster prefix (the design's <i>Cutover</i>: "back up the selected etcd namespace"):
 * a JSON document {@code {"orbitkv_backup": 1, "prefix", "revision", "created_unix_ms", "keys": [{"key",
 * "value_b64", "mod_revision", "lease"}]}} written to a temporary file and moved into place, so a reader
 * never sees half a backup. Values are base64 so that any old binary's bytes survive exactly.
 */
final class BackupFile {
    static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    record Contents(String prefix, long revision, List<KeyEntry> keys) {}

    private BackupFile() {}

    static void write(Path out, String prefix, long revision, List<KeyEntry> keys) throws IOException {
        Path dir = out.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, ".orbitkv-backup-", ".tmp");
        try {
            try (JsonGenerator g = JSON.getFactory().createGenerator(tmp.toFile(), JsonEncoding.UTF8)) {
                g.useDefaultPrettyPrinter();
                g.writeStartObject();
                g.writeNumberField("orbitkv_backup", VERSION);
                g.writeStringField("prefix", prefix);
                g.writeNumberField("revision", revision);
                g.writeNumberField("created_unix_ms", System.currentTimeMillis());
                g.writeArrayFieldStart("keys");
                for (KeyEntry k : keys) {
                    g.writeStartObject();
                    g.writeStringField("key", k.key());
                    g.writeStringField("value_b64", Base64.getEncoder().encodeToString(k.value().getBytes(StandardCharsets.UTF_8)));
                    g.writeNumberField("mod_revision", k.modRevision());
                    g.writeNumberField("lease", k.lease());
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * Reads and validates a backup.
     *
     * @throws IllegalArgumentException naming what is malformed
     * @throws IOException if the file cannot be read
     */
    static Contents read(Path in) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(in.toFile());
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new IllegalArgumentException("backup " + in + " is not JSON: " + e.getOriginalMessage());
        }
        if (root == null || root.path("orbitkv_backup").asInt(-1) != VERSION) {
            throw new IllegalArgumentException("backup " + in + " lacks \"orbitkv_backup\": " + VERSION);
        }
        String prefix = root.path("prefix").asText(null);
        long revision = root.path("revision").asLong(-1);
        JsonNode keys = root.path("keys");
        if (prefix == null || revision < 1 || !keys.isArray()) {
            throw new IllegalArgumentException("backup " + in + " lacks prefix, revision or keys");
        }
        List<KeyEntry> out = new ArrayList<>(keys.size());
        for (JsonNode k : keys) {
            String key = k.path("key").asText(null);
            String b64 = k.path("value_b64").asText(null);
            if (key == null || b64 == null || !key.startsWith(prefix)) {
                throw new IllegalArgumentException("backup " + in + " holds a key entry without key/value under " + prefix);
            }
            String value = new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
            out.add(new KeyEntry(key, value, k.path("mod_revision").asLong(), k.path("lease").asLong()));
        }
        return new Contents(prefix, revision, out);
    }
}
