package orbitkv.membership;

import java.util.Objects;

/**
 * A loopback-or-routable {@code host:port} that a member advertises (peer gRPC listener, HTTP control).
 *
 * @param host host name or IP literal (IPv6 without brackets), 1..253 characters
 * @param port TCP port, 1..65535
 */
public record Endpoint(String host, int port) {
    public Endpoint {
        Objects.requireNonNull(host, "endpoint host must not be null");
        if (host.isEmpty() || host.length() > 253) {
            throw new IllegalArgumentException("endpoint host must be 1..253 characters, got " + host.length());
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint port must be 1..65535, got " + port);
        }
    }

    /**
     * Parses {@code host:port} or {@code [v6]:port}.
     *
     * @throws IllegalArgumentException naming what is malformed
     */
    public static Endpoint parse(String text) {
        Objects.requireNonNull(text, "endpoint must not be null");
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("endpoint must be HOST:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("endpoint port is not a number in '" + text + "'");
        }
        return new Endpoint(host, port);
    }

    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
