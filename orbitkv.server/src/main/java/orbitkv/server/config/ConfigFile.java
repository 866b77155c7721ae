package orbitkv.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The {@code --config FILE} format: one JSON object whose keys are option names without the dashes
 * ({@code {"dram": "4GiB", "metadata-namespace": ["a", "b"], "standalone": true}}). Values are strings,
 * integers or booleans; a repeatable option takes an array of strings. An unknown key is refused (a
 * typo must not silently fall back to a default). Flags given on the command line win over the file.
 */
public final class ConfigFile {
    /** Largest accepted config file. */
    public static final long FILE_BYTES_MAX = 1 << 20;

    private ConfigFile() {}

    public static RawValues read(Path file) {
        byte[] bytes;
        try {
            if (Files.size(file) > FILE_BYTES_MAX) {
                throw new ConfigException("--config " + file + " is larger than " + FILE_BYTES_MAX + " bytes");
            }
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new ConfigException("--config " + file + " cannot be read: " + e.getMessage());
        }
        return parse(file.toString(), bytes);
    }

    static RawValues parse(String name, byte[] json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (JsonProcessingException e) {
            throw new ConfigException("--config " + name + " is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new ConfigException("--config " + name + " cannot be read: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new ConfigException("--config " + name + " must hold one JSON object");
        }
        RawValues values = new RawValues();
        Iterator<Map.Entry<String, JsonNode>> fields = root.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> f = fields.next();
            Setting s = Setting.byOptionName(f.getKey());
            if (s == null) {
                throw new ConfigException("--config " + name + ": unknown setting '" + f.getKey() + "'");
            }
            values.put(s, values(name, s, f.getValue()));
        }
        return values;
    }

    private static List<String> values(String name, Setting s, JsonNode v) {
        if (s.kind() == Setting.Kind.TEXT_LIST) {
            if (!v.isArray() || v.isEmpty()) {
                throw new ConfigException("--config " + name + ": '" + s.optionName() + "' must be a non-empty array of strings");
            }
            List<String> out = new ArrayList<>();
            for (JsonNode e : v) {
                if (!e.isTextual()) {
                    throw new ConfigException("--config " + name + ": '" + s.optionName() + "' must be a non-empty array of strings");
                }
                out.add(e.textValue());
            }
            return out;
        }
        boolean ok = switch (s.kind()) {
            case FLAG -> v.isBoolean();
            case MS, COUNT -> v.isIntegralNumber();
            case SIZE -> v.isIntegralNumber() || v.isTextual();
            default -> v.isTextual();
        };
        if (!ok) {
            throw new ConfigException("--config " + name + ": '" + s.optionName() + "' must be "
                    + switch (s.kind()) {
                        case FLAG -> "true or false";
                        case MS, COUNT -> "an integer";
                        case SIZE -> "an integer of bytes or a string such as \"4GiB\"";
                        default -> "a string";
                    } + ", got " + v);
        }
        return List.of(v.asText());
    }
}
