package orbitkv.server.demo;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import orbitkv.membership.EtcdEndpoints;

/**
 * One local {@code etcd} process for the demo: free loopback ports, a data directory under the demo's
 * temporary directory, ready when {@code /health} answers {@code "health":"true"}. Never a production
 * layout (OPS-6 asks for three voting members in independent failure domains).
 */
final class LocalEtcd implements AutoCloseable {
    private static final Duration READY_BOUND = Duration.ofSeconds(30);

    private final ChildProcess process;
    private final URI clientUrl;

    private LocalEtcd(ChildProcess process, URI clientUrl) {
        this.process = process;
        this.clientUrl = clientUrl;
    }

    static LocalEtcd start(String binary, Path dataDir, Path logDir) throws IOException, InterruptedException {
        int client = freePort();
        int peer = freePort();
        String clientUrl = "http://127.0.0.1:" + client;
        String peerUrl = "http://127.0.0.1:" + peer;
        ChildProcess p = ChildProcess.start("etcd", List.of(binary, "--name", "demo", "--data-dir", dataDir.toString(),
                "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
                "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
                "--initial-cluster", "demo=" + peerUrl), logDir, line -> false);
        LocalEtcd etcd = new LocalEtcd(p, URI.create(clientUrl));
        try {
            etcd.awaitHealthy();
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.close();
            throw e;
        }
        return etcd;
    }

    EtcdEndpoints endpoints() {
        return new EtcdEndpoints(List.of(clientUrl));
    }

    private void awaitHealthy() throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        long deadline = System.nanoTime() + READY_BOUND.toNanos();
        String last = "no answer";
        while (System.nanoTime() - deadline < 0) {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(clientUrl.resolve("/health"))
                        .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().contains("\"health\":\"true\"")) {
                    return;
                }
                last = r.statusCode() + " " + r.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(100); // polling a child process's readiness endpoint, bounded by READY_BOUND
        }
        throw new IOException("etcd at " + clientUrl + " not healthy within " + READY_BOUND.toSeconds() + " s: " + last
                + "; stderr: " + process.stderrTail());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.terminate(Duration.ofSeconds(10));
        process.close();
    }
}
