package orbitkv.conformance.perf;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * Issue 37 item 5: where a restore's time goes, stage by stage, from a Manager's flight recording. The Manager's
 * data-path events ({@code orbitkv.HttpRequest}, {@code orbitkv.DataExchange}, {@code orbitkv.DataServe},
 * {@code orbitkv.Restore}, off by default) are enabled by {@link #ENABLE}; {@link #summarize} groups the events that started at or after a given
 * instant by event, kind and size and reports each stage's p50 and p90 in microseconds. Durations only: each stage is
 * timed within one process, so the two Managers' clocks never need aligning.
 */
final class FlightStages {
    /** Recording options that enable the four events (appended to {@code -XX:StartFlightRecording}). */
    static final String ENABLE = "+orbitkv.HttpRequest#enabled=true,+orbitkv.DataExchange#enabled=true,"
            + "+orbitkv.DataServe#enabled=true,+orbitkv.Restore#enabled=true";
    /** Samples kept per group; later ones are counted, not kept. */
    static final int SAMPLES_MAX = 1 << 20;

    /** Each event type's stage fields, in the order a request passes them. */
    static final Map<String, List<String>> STAGES = Map.of(
            "orbitkv.HttpRequest", List.of("receiveNanos", "queueNanos", "executeNanos", "writeNanos"),
            "orbitkv.DataExchange", List.of("handoffNanos", "answerWaitNanos", "bodyNanos"),
            "orbitkv.DataServe", List.of("prepareNanos", "writeNanos"),
            "orbitkv.Restore", List.of("evidenceNanos", "planNanos", "creditsNanos", "grantWaitNanos", "grantWakeNanos",
                    "readNanos", "afterReadyNanos", "assembleNanos", "otherNanos", "totalNanos"));

    private FlightStages() {}

    /** One group's samples: per stage, in arrival order. */
    private static final class Group {
        final String type;
        final long[][] samples;
        int n;
        long dropped;

        Group(String type) {
            this.type = type;
            this.samples = new long[STAGES.get(type).size()][64];
        }

        void add(RecordedEvent e) {
            if (n == SAMPLES_MAX) {
                dropped++;
                return;
            }
            List<String> fields = STAGES.get(type);
            for (int i = 0; i < fields.size(); i++) {
                if (n == samples[i].length) {
                    samples[i] = Arrays.copyOf(samples[i], n * 2);
                }
                samples[i][n] = e.getLong(fields.get(i));
            }
            n++;
        }
    }

    /**
     * Report lines, one per group ({@code event kind size: n, stage p50/p90 us ...}), for the events of {@code
     * recording} that started at or after {@code from}.
     */
    static List<String> summarize(String node, Path recording, Instant from) throws IOException {
        Map<String, Group> groups = new TreeMap<>();
        try (RecordingFile f = new RecordingFile(recording)) {
            while (f.hasMoreEvents()) {
                RecordedEvent e = f.readEvent();
                String type = e.getEventType().getName();
                if (STAGES.containsKey(type) && !e.getStartTime().isBefore(from)) {
                    groups.computeIfAbsent(label(type, e), x -> new Group(type)).add(e);
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Group> g : groups.entrySet()) {
            out.add(node + " " + g.getKey() + ": " + line(g.getValue()));
        }
        return out;
    }

    private static String label(String type, RecordedEvent e) {
        return switch (type) {
            case "orbitkv.HttpRequest" -> "http " + e.getString("endpoint") + " " + e.getInt("status") + " answer "
                    + e.getLong("answerBytes") + " B";
            case "orbitkv.DataExchange" -> "exchange " + e.getString("kind") + " " + e.getLong("payloadBytes") + " B "
                    + e.getString("outcome");
            case "orbitkv.Restore" -> "restore routes " + e.getInt("routes") + " grants " + e.getInt("peerGrants")
                    + " keys " + e.getInt("keys") + " " + e.getLong("payloadBytes") + " B";
            default -> "serve " + e.getString("kind") + " " + e.getLong("payloadBytes") + " B"
                    + (e.getBoolean("written") ? "" : " unwritten");
        };
    }

    private static String line(Group g) {
        Map<String, String> stages = new LinkedHashMap<>();
        List<String> fields = STAGES.get(g.type);
        for (int i = 0; i < fields.size(); i++) {
            long[] s = Arrays.copyOf(g.samples[i], g.n);
            Arrays.sort(s);
            stages.put(fields.get(i).replace("Nanos", ""), String.format(Locale.ROOT, "%.1f/%.1f",
                    Stats.rank(s, 0.5) / 1e3, Stats.rank(s, 0.9) / 1e3));
        }
        return "n " + g.n + (g.dropped > 0 ? " (+" + g.dropped + " not kept)" : "") + ", p50/p90 us " + stages;
    }
}
