package orbitkv.conformance.campaign;

import java.util.List;
import orbitkv.conformance.manager.ManagerApi;
import orbitkv.conformance.manager.ManagerProcess;

/**
 * One Manager as a campaign sample reads it (issue 34 item 7): its raw answers (any status code, never an
 * {@link AssertionError} for a non-200) and whether its process stayed live. Injectable, so a unit test can
 * answer 500 without a process.
 */
interface Sampled {
    String name();

    /** The incarnation the campaign believes the node runs (a requester's views are keyed by it). */
    String incarnation();

    /** {@code GET /cache/metadata/status}; throws an unchecked exception when nothing answered. */
    ManagerApi.Reply status();

    /** {@code POST /cache/query} of {@code keys}; throws an unchecked exception when nothing answered. */
    ManagerApi.Reply query(List<String> keys);

    /** True while the process the sample started with is alive, not SIGSTOPped, and not replaced by a restart. */
    boolean live();

    /** {@code n} as it is now: a restart or kill after this call makes {@link #live()} false. */
    static Sampled of(CampaignCluster.Node n) {
        ManagerProcess process = n.process;
        ManagerApi api = n.api;
        String incarnation = n.incarnation;
        return new Sampled() {
            @Override
            public String name() {
                return n.name;
            }

            @Override
            public String incarnation() {
                return incarnation;
            }

            @Override
            public ManagerApi.Reply status() {
                return api.get(ManagerApi.STATUS_PATH);
            }

            @Override
            public ManagerApi.Reply query(List<String> keys) {
                return api.queryFullOnly(CampaignCluster.NAMESPACE, keys);
            }

            @Override
            public boolean live() {
                return process != null && n.process == process && process.alive() && !n.stopped;
            }
        };
    }
}
