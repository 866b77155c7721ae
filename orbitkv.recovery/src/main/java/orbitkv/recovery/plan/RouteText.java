package orbitkv.recovery.plan;

import orbitkv.recovery.RouteSource;

/** The compact text of a source in traces: {@code local-dram}, {@code peer-ssd@node/epoch}. */
public final class RouteText {
    private RouteText() {}

    public static String source(RouteSource s) {
        return switch (s) {
            case RouteSource.Local l -> l.kind().traceName();
            case RouteSource.Peer p -> p.kind().traceName() + "@" + owner(p);
        };
    }

    /** {@code local} or {@code node/epoch}. */
    public static String owner(RouteSource s) {
        return switch (s) {
            case RouteSource.Local l -> "local";
            case RouteSource.Peer p -> p.owner().nodeId().value() + "/" + p.owner().epoch().value();
        };
    }
}
