package orbitkv.conformance.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import orbitkv.testing.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fixture itself, so other issues can rely on stop/cont/kill/restart. */
@Tag("gate")
class EtcdFixtureTest {
    @RegisterExtension
    static final EtcdFixture ETCD = EtcdFixture.singleNode();

    @Test
    @DisplayName("SIGSTOP silences a member, SIGCONT revives it; SIGKILL + restart keeps the data directory")
    void stopContKillRestart() {
        EtcdFixture.Member m = ETCD.member(0);
        ETCD.put("/fixture/k", "v1");
        assertThat(m.isLeader()).isTrue();

        m.stop();
        assertThat(m.alive()).isTrue();
        assertThatThrownBy(() -> ETCD.etcdctl("--command-timeout=1s", "get", "/fixture/k"))
                .isInstanceOf(AssertionError.class);
        m.cont();
        Await.until("answers again after SIGCONT", Duration.ofSeconds(10), () -> "v1".equals(ETCD.get("/fixture/k")));

        long pid = m.pid();
        m.kill();
        assertThat(m.alive()).isFalse();
        m.restart();
        assertThat(m.pid()).isNotEqualTo(pid);
        assertThat(ETCD.get("/fixture/k")).isEqualTo("v1");
        assertThat(ETCD.endpoints().urls()).containsExactly(m.clientUrl());
    }
}
