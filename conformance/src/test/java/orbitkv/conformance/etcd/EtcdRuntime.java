package orbitkv.conformance.etcd;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * How {@link EtcdFixture} runs its etcd members: local processes of the Debian binary
 * ({@link ProcessEtcdRuntime}) or Docker containers through Testcontainers ({@link ContainerEtcdRuntime}).
 * {@link EtcdRuntimeSelection} picks one; the fixture drives members only through this interface, so both
 * runtimes offer the same fixture API (kill, stop, cont, restart, etcdctl, /health, /metrics on loopback).
 */
sealed interface EtcdRuntime permits ProcessEtcdRuntime, ContainerEtcdRuntime {

    /** Creates and launches {@code size} members of a new cluster; the fixture then awaits their health. */
    List<MemberHandle> launch(int size) throws IOException;

    /**
     * Runs etcdctl (API v3) with {@code args} against the given live members and returns its output;
     * throws {@link AssertionError} with the output on a non-zero exit or after a 15 s bound.
     */
    String etcdctl(List<MemberHandle> live, List<String> args);

    /** Removes every member (a stopped one included) and everything the runtime created; idempotent. */
    void close();

    /** One member as the runtime runs it. */
    interface MemberHandle {
        /** Member name: {@code m0}, {@code m1}, ... */
        String name();

        /** Client URL on loopback (the same after a restart). */
        URI clientUrl();

        /** Prometheus endpoint on loopback. */
        URI metricsUrl();

        /** Host PID of the member's etcd process while it runs (a new one after a restart). */
        long pid();

        /** True while the member's etcd process exists, stopped (frozen) or not. */
        boolean alive();

        /** SIGKILL, then a bounded wait until the process is gone. */
        void kill();

        /** Freezes every process of the member: it keeps its sockets but answers nothing. */
        void stop();

        /** Unfreezes after {@link #stop()}. */
        void cont();

        /** Starts a killed member again with the same ports and the same data; the fixture awaits health. */
        void relaunch();

        /** Null while the process exists; otherwise how it ended, with the tail of its log. */
        String deathReport();

        /** Where the member's log is, for failure messages. */
        String logLocation();
    }

    /** {@code n} distinct free TCP ports on loopback (held together while chosen, then released). */
    static int[] freeLoopbackPorts(int n) throws IOException {
        int[] ports = new int[n];
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
        return ports;
    }
}
