package orbitkv.server.runtime;

import java.net.InetSocketAddress;
import orbitkv.membership.Incarnation;
import orbitkv.server.net.NativeTransport;

/** The one line {@code orbitkv manager ready http=HOST:PORT peer=HOST:PORT incarnation=...} (DESIGN §7 CLI). */
final class ReadyLine {
    private ReadyLine() {}

    /** @param peer null when there is no peer listener (standalone) */
    static String of(InetSocketAddress http, InetSocketAddress peer, Incarnation incarnation, NativeTransport transport,
                     String mode) {
        return "orbitkv manager ready http=" + hostPort(http) + " peer=" + (peer == null ? "none" : hostPort(peer))
                + " incarnation=" + incarnation + " transport=" + transport.name() + " mode=" + mode;
    }

    static String hostPort(InetSocketAddress a) {
        String host = a.getAddress().getHostAddress();
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + a.getPort() : host + ":" + a.getPort();
    }
}
