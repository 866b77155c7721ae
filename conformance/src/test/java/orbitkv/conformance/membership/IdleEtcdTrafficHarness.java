package orbitkv.conformance.membership;

import orbitkv.conformance.peer.FaultProxy;
import orbitkv.conformance.peer.LinkFaults;
import static orbitkv.conformance.membership.Gates.cluster;
import static orbitkv.conformance.membership.Gates.format;
import static orbitkv.conformance.membership.Gates.node;
import static orbitkv.conformance.membership.Gates.registered;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import orbitkv.conformance.etcd.EtcdFixture;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.Membership;
import orbitkv.membership.MembershipConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Measurement harness, not a gate (never run by the default build: the name matches no surefire include):
 * etcd traffic caused by one idle registered member (lease renewals + membership watch), against an idle
 * control window without members. The baseline for block-churn independence of etcd traffic.
 *
 * <p>Run: {@code mvn -q -B -pl orbitkv.membership,conformance -am test -Dsurefire.failIfNoSpecifiedTests=false
 * -Dtest=IdleEtcdTrafficHarness -Dorbitkv.idle.windowSeconds=60}
 */
@Tag("qualification")
@Timeout(value = 4, unit = java.util.concurrent.TimeUnit.HOURS) // qualification runs are long; the 20 m default is for CI lanes
class IdleEtcdTrafficHarness {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    record Sample(long nanos, Map<String, Double> received, double started, double rxBytes, double txBytes, double walFsyncs,
                  long proxyUp, long proxyDown) {}

    private Sample sample(FaultProxy proxy) {
        String m = ETCD.scrape(ETCD.member(0));
        Map<String, Double> byMethod = new TreeMap<>();
        Matcher x = Pattern.compile("grpc_server_msg_received_total\\{[^}]*grpc_method=\"([^\"]+)\"[^}]*\\} (\\S+)").matcher(m);
        while (x.find()) {
            byMethod.merge(x.group(1), Double.parseDouble(x.group(2)), Double::sum);
        }
        return new Sample(System.nanoTime(), byMethod, EtcdFixture.metricValue(m, "grpc_server_started_total"),
                EtcdFixture.metricValue(m, "etcd_network_client_grpc_received_bytes_total"),
                EtcdFixture.metricValue(m, "etcd_network_client_grpc_sent_bytes_total"),
                EtcdFixture.metricValue(m, "etcd_disk_wal_fsync_duration_seconds_count"),
                proxy == null ? 0 : proxy.bytesTowardUpstream(), proxy == null ? 0 : proxy.bytesTowardDownstream());
    }

    private static void window(long seconds) {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() - end < 0) {
            LockSupport.parkNanos(Math.min(end - System.nanoTime(), 1_000_000_000L)); // the measured idle window
        }
    }

    private static void report(String label, Sample a, Sample b) {
        double s = (b.nanos() - a.nanos()) / 1e9;
        double total = 0;
        StringBuilder methods = new StringBuilder();
        for (var e : b.received().entrySet()) {
            double d = e.getValue() - a.received().getOrDefault(e.getKey(), 0.0);
            if (d > 0) {
                total += d;
                methods.append(String.format(" %s=%.3f/s", e.getKey(), d / s));
            }
        }
        System.out.printf("%s window=%.1fs grpc_calls_started=%.3f/s grpc_msgs_received=%.3f/s [%s ] grpc_rx=%.1f B/s grpc_tx=%.1f B/s wal_fsyncs=%.3f/s tcp_up=%.1f B/s tcp_down=%.1f B/s%n",
                label, s, (b.started() - a.started()) / s, total / s, methods, (b.rxBytes() - a.rxBytes()) / s, (b.txBytes() - a.txBytes()) / s,
                (b.walFsyncs() - a.walFsyncs()) / s, (b.proxyUp() - a.proxyUp()) / s, (b.proxyDown() - a.proxyDown()) / s);
    }

    @Test
    void idleMemberTraffic() throws Exception {
        long seconds = Long.getLong("orbitkv.idle.windowSeconds", 60);
        String c = cluster();
        format(ETCD.endpoints(), c);
        Sample c0 = sample(null);
        window(seconds);
        Sample c1 = sample(null);
        report("control (no member)", c0, c1);
        try (FaultProxy proxy = FaultProxy.inFrontOf(ETCD.member(0).clientUrl())) {
            Membership m = registered(new EtcdEndpoints(List.of(proxy.url())), node(c, "idle"), MembershipConfig.defaults());
            try {
                window(3); // let registration and bootstrap traffic pass
                Sample a = sample(proxy);
                window(seconds);
                Sample b = sample(proxy);
                report("one idle member (defaults: renewal 2 s, TTL 15 s)", a, b);
                assertThat(m.fenced()).isFalse();
                assertThat(b.received().getOrDefault("LeaseKeepAlive", 0.0)).isGreaterThan(a.received().getOrDefault("LeaseKeepAlive", 0.0));
            } finally {
                m.close();
            }
        }
    }
}
