package orbitkv.conformance.perf;

import java.util.Map;

/** Reading a Prometheus text exposition (a Manager's or etcd's {@code /metrics}) in the harnesses. */
final class PromText {
    private PromText() {}

    /**
     * The sum of the samples of {@code metric} whose labels include every {@code name=value} of {@code labels}
     * ({@code _total} is tried too for counters); 0 if none.
     */
    static double sum(String text, String metric, Map<String, String> labels) {
        double total = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("#")) {
                continue;
            }
            String name = line.contains("{") ? line.substring(0, line.indexOf('{')) : line.split("\\s+")[0];
            if (!name.equals(metric) && !name.equals(metric + "_total")) {
                continue;
            }
            String labelText = line.contains("{") ? line.substring(line.indexOf('{'), line.lastIndexOf('}') + 1) : "";
            boolean all = true;
            for (Map.Entry<String, String> l : labels.entrySet()) {
                all &= labelText.contains(l.getKey() + "=\"" + l.getValue() + "\"");
            }
            if (all) {
                String[] parts = line.strip().split("\\s+");
                total += Double.parseDouble(parts[parts.length - 1]);
            }
        }
        return total;
    }

    static double sum(String text, String metric) {
        return sum(text, metric, Map.of());
    }
}
