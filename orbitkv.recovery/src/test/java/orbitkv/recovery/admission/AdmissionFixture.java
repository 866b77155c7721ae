package orbitkv.recovery.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import orbitkv.recovery.AdmissionOutcome;
import orbitkv.recovery.AdmissionPolicy;
import orbitkv.recovery.AdmissionPolicy.LaneLimits;
import orbitkv.recovery.NicLane;
import orbitkv.recovery.NicLane.Direction;
import orbitkv.recovery.NodeAdmission;
import orbitkv.recovery.SubmitterKind;
import orbitkv.recovery.fixtures.ManualClock;

/** Small lanes for admission tests: lo and eth1 in both directions. */
final class AdmissionFixture {
    static final NicLane LO_RX = new NicLane("lo", Direction.RX);
    static final NicLane LO_TX = new NicLane("lo", Direction.TX);
    static final NicLane ETH_RX = new NicLane("eth1", Direction.RX);
    static final NicLane ETH_TX = new NicLane("eth1", Direction.TX);
    static final long TTL = 1_000_000_000L;
    static final long AGING = 500_000_000L;

    private AdmissionFixture() {}

    /** Window 1000 bytes, 10 % reserve (usable 900), batch 100; eth1 paced at 1000 bytes/s (usable 900). */
    static AdmissionPolicy policy(int pendingMax, int submittersMax, int leasesMax) {
        LaneLimits lo = new LaneLimits(1_000, 0, 10);
        LaneLimits eth = new LaneLimits(1_000, 1_000, 10);
        return new AdmissionPolicy(Map.of(LO_RX, lo, LO_TX, lo, ETH_RX, eth, ETH_TX, eth), 100, TTL, pendingMax,
                AGING, submittersMax, leasesMax);
    }

    static NodeAdmission owner(ManualClock clock) {
        return NodeAdmission.create(policy(16, 16, 64), clock);
    }

    static long register(NodeAdmission a, SubmitterKind kind, String instance) {
        AdmissionOutcome o = a.register(kind, instance);
        assertThat(o).isInstanceOf(AdmissionOutcome.Registered.class);
        return ((AdmissionOutcome.Registered) o).submitter();
    }

    static AdmissionOutcome.Granted granted(AdmissionOutcome o) {
        assertThat(o).isInstanceOf(AdmissionOutcome.Granted.class);
        return (AdmissionOutcome.Granted) o;
    }

    static long queued(AdmissionOutcome o) {
        assertThat(o).isInstanceOf(AdmissionOutcome.Queued.class);
        return ((AdmissionOutcome.Queued) o).ticket();
    }

    static AdmissionOutcome.Refused refused(AdmissionOutcome o) {
        assertThat(o).isInstanceOf(AdmissionOutcome.Refused.class);
        return (AdmissionOutcome.Refused) o;
    }
}
