package orbitkv.server.config;

import java.util.Objects;

/**
 * A listen {@code HOST:PORT}; port 0 asks the kernel for a free port (the chosen one is printed on the
 * ready line).
 *
 * @param host host name or IP literal (IPv6 without brackets)
 * @param port 0..65535
 */
public record ListenAddress(String host, int port) {
    public ListenAddress {
        Objects.requireNonNull(host, "listen host");
        if (host.isEmpty() || host.length() > 253) {
            throw new IllegalArgumentException("listen host must be 1..253 characters, got " + host.length());
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("listen port must be 0..65535, got " + port);
        }
    }

    static ListenAddress parse(Setting setting, String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new ConfigException(setting.flag() + " must be HOST:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new ListenAddress(host, Integer.parseInt(text.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(setting.flag() + " must be HOST:PORT with a port of 0..65535, got '" + text + "'");
        }
    }

    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
