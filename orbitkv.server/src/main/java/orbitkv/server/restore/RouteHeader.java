package orbitkv.server.restore;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import orbitkv.recovery.RouteSource;
import orbitkv.transfer.Backend;

/**
 * The served runs of a restore in the API's words (docs/api.md "Restore route header"):
 * {@code r=<n> stop=<stop>[ detail] routes=<runs>[,+N]}, at most {@value #BYTES_MAX} bytes. The HTTP adapter sends it
 * as a header; a streamed restore puts it in its end record.
 */
public final class RouteHeader {
    /** Bound of the route text. */
    public static final int BYTES_MAX = 512;

    private RouteHeader() {}

    /**
     * One delivered block: route kind, source owner (peers), READ backend (peers) and its payload bytes.
     *
     * @param owner {@code node/epoch} of a peer source, null for a local one
     * @param backend the READ backend of a peer block, null for a local one
     */
    public record Served(String kind, String owner, Backend backend, long payloadBytes) {
        String label() {
            return kind + (owner == null ? "" : "@" + owner) + backendSuffix();
        }

        private String backendSuffix() {
            return backend == null ? "" : backend == Backend.SHARED_MEMORY ? "+shm" : "+tcp";
        }
    }

    /** {@code r=<n> stop=<stop>[ detail] routes=<runs>[,+N]}, at most {@value #BYTES_MAX} bytes. */
    public static String of(List<Served> served, String stop) {
        StringBuilder b = new StringBuilder(128).append("r=").append(served.size()).append(" stop=").append(stop);
        List<String> runs = new ArrayList<>();
        int from = 0;
        for (int k = 1; k <= served.size(); k++) {
            if (k == served.size() || !served.get(k).label().equals(served.get(from).label())) {
                Served s = served.get(from);
                runs.add(s.kind() + (s.owner() == null ? "" : "@" + s.owner()) + "[" + from + "," + k + "):ready"
                        + s.backendSuffix());
                from = k;
            }
        }
        if (!runs.isEmpty()) {
            b.append(" routes=");
            int shown = 0;
            for (String r : runs) {
                int reserve = runs.size() - shown - 1 > 0 ? 6 : 0;
                if (b.length() + 1 + r.length() + reserve > BYTES_MAX) {
                    break;
                }
                b.append(shown == 0 ? "" : ",").append(r);
                shown++;
            }
            if (shown < runs.size()) {
                b.append(shown == 0 ? "+" : ",+").append(runs.size() - shown);
            }
        }
        return b.toString();
    }

    /** {@code node/epoch} of a peer source, null for a local one. */
    static String owner(RouteSource s) {
        return s instanceof RouteSource.Peer p ? p.owner().nodeId().value() + "/" + p.owner().epoch().value() : null;
    }

    /** A closed enum as a lowercase trace name. */
    static String name(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
