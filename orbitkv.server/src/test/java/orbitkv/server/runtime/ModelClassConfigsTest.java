package orbitkv.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import orbitkv.server.config.ConfigException;
import orbitkv.server.config.ConfigFile;
import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ready {@code --config} files per model class in {@code docs/configs/} (issue 35 item 9; sizes from the engines notes,
 * section 2): every file goes through the Manager's own loader ({@link ConfigFile#read}: an unknown option or a wrong type
 * is refused) and its one validation pass ({@link ManagerConfig#from}: every relation between options), standalone
 * and distributed, and fits the runtime image's baked JVM limits ({@code -Xmx1g -XX:MaxDirectMemorySize=1g},
 * {@link MemoryBudget}, BND-6). docs/engines.md's sizing table names exactly these files, and each file's block
 * bound holds the chunk the table names and its restore memory eight such chunks in one answer.
 */
@Tag("unit")
class ModelClassConfigsTest {
    private static final long MIB = 1024 * 1024;
    /** The image's baked JVM limits (dist/pom.xml). */
    private static final long IMAGE_HEAP = 1024 * MIB;
    private static final long IMAGE_DIRECT = 1024 * MIB;
    /** Chunks an engine reads in one batch that one restore answer must hold (LMCache's usual prefetch). */
    private static final int CHUNKS_PER_RESTORE = 8;
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+\\.json)` \\|[^|]*\\| ([0-9.]+) MiB \\|.*$");

    @TempDir
    Path dram;

    static Path configsDir() {
        return Path.of(System.getProperty("user.dir")).resolve("../docs/configs").normalize();
    }

    static List<Path> configFiles() throws IOException {
        try (Stream<Path> s = Files.list(configsDir())) {
            return s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
    }

    /** The file as the Manager loads it, with the command-line flags a deployment adds (flags win). */
    private ManagerConfig load(Path file, boolean standalone) {
        RawValues flags = new RawValues().put(Setting.DRAM_DIR, dram.toString());
        if (standalone) {
            flags.put(Setting.STANDALONE, "true");
        } else {
            flags.put(Setting.CLUSTER, "c").put(Setting.NODE_ID, "n").put(Setting.ETCD, "http://127.0.0.1:2379");
        }
        return ManagerConfig.from(ConfigFile.read(file).overlay(flags));
    }

    @Test
    @DisplayName("BND-6 every docs/configs file loads, validates standalone and distributed, and fits the image's JVM limits")
    void everyFileLoadsAndValidates() throws IOException {
        List<Path> files = configFiles();
        assertThat(files).as("ready config files in %s", configsDir()).hasSizeGreaterThanOrEqualTo(5);
        for (Path f : files) {
            for (boolean standalone : new boolean[] {true, false}) {
                ManagerConfig c = load(f, standalone);
                assertThat(MemoryBudget.refusal(c, IMAGE_HEAP, IMAGE_DIRECT)).as("%s (standalone=%s) fits -Xmx1g and 1 GiB direct",
                        f.getFileName(), standalone).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("BND-6 docs/engines.md's sizing table names every file; each holds its chunk and eight chunks per restore")
    void sizingTableMatchesTheFiles() throws IOException {
        Map<String, Double> chunkMib = sizingTable();
        TreeSet<String> names = new TreeSet<>();
        configFiles().forEach(f -> names.add(f.getFileName().toString()));
        assertThat(new TreeSet<>(chunkMib.keySet())).as("docs/engines.md sizing rows vs docs/configs").isEqualTo(names);
        for (Map.Entry<String, Double> row : chunkMib.entrySet()) {
            ManagerConfig c = load(configsDir().resolve(row.getKey()), true);
            long chunk = (long) Math.ceil(row.getValue() * MIB);
            assertThat(c.tiers().blockBytesMax()).as("%s: --block-bytes-max holds one chunk", row.getKey()).isGreaterThanOrEqualTo(chunk);
            assertThat(c.tiers().restoreBytesInFlightMax()).as("%s: --restore-bytes-in-flight-max holds %d chunks in one answer",
                    row.getKey(), CHUNKS_PER_RESTORE).isGreaterThanOrEqualTo(CHUNKS_PER_RESTORE * (chunk + ManagerConfig.RECORD_FRAMING_BYTES_MAX));
        }
    }

    @Test
    @DisplayName("BND-6 the check can fail: an unknown option and a broken relation in a config file are refused")
    void theCheckRefusesBrokenFiles(@TempDir Path dir) throws IOException {
        Path typo = dir.resolve("typo.json");
        Files.writeString(typo, "{\"block-bytes-maximum\": \"64MiB\"}", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> load(typo, true)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("unknown setting 'block-bytes-maximum'");
        Path broken = dir.resolve("broken.json");
        Files.writeString(broken, "{\"block-bytes-max\": \"128MiB\", \"restore-bytes-in-flight-max\": \"64MiB\"}", StandardCharsets.UTF_8);
        assertThatThrownBy(() -> load(broken, true)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("--restore-bytes-in-flight-max").hasMessageContaining("--block-bytes-max");
        Path tooBig = dir.resolve("big.json");
        Files.writeString(tooBig, "{\"restore-bytes-in-flight-max\": \"2GiB\"}", StandardCharsets.UTF_8);
        assertThat(MemoryBudget.refusal(load(tooBig, true), IMAGE_HEAP, IMAGE_DIRECT)).isPresent();
    }

    /** File name → chunk MiB, from the rows between {@code <!-- configs:begin -->} and {@code <!-- configs:end -->}. */
    private static Map<String, Double> sizingTable() throws IOException {
        List<String> lines = Files.readAllLines(configsDir().resolve("../engines.md").normalize(), StandardCharsets.UTF_8);
        int begin = lines.indexOf("<!-- configs:begin -->");
        int end = lines.indexOf("<!-- configs:end -->");
        assertThat(begin).as("docs/engines.md has a configs table").isNotNegative().isLessThan(end);
        Map<String, Double> out = new LinkedHashMap<>();
        for (String line : lines.subList(begin + 1, end)) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                assertThat(out.put(m.group(1), Double.parseDouble(m.group(2)))).as("one row per file: %s", m.group(1)).isNull();
            }
        }
        return out;
    }
}
