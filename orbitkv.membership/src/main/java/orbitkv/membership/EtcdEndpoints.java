package orbitkv.membership;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The etcd client URLs of the coordinator cluster ({@code --etcd URLS}): 1..16 {@code http://host:port}
 * URLs without path, query or credentials (the trusted-cluster posture, docs/operations.md).
 *
 * @param urls the URLs, in the operator's order
 */
public record EtcdEndpoints(List<URI> urls) {
    /** At most this many endpoints. */
    public static final int MAX_ENDPOINTS = 16;

    public EtcdEndpoints {
        Objects.requireNonNull(urls, "etcd endpoints must not be null");
        if (urls.isEmpty() || urls.size() > MAX_ENDPOINTS) {
            throw new IllegalArgumentException(
                    "etcd endpoints must list 1.." + MAX_ENDPOINTS + " URLs, got " + urls.size());
        }
        for (URI u : urls) {
            if (!"http".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 1
                    || (u.getRawPath() != null && !u.getRawPath().isEmpty() && !u.getRawPath().equals("/"))
                    || u.getRawQuery() != null || u.getRawUserInfo() != null) {
                throw new IllegalArgumentException("etcd endpoint must be http://host:port, got '" + u + "'");
            }
        }
        urls = List.copyOf(urls);
    }

    /**
     * Parses a comma-separated list such as {@code http://127.0.0.1:2379,http://10.0.0.2:2379}.
     *
     * @throws IllegalArgumentException naming the malformed URL
     */
    public static EtcdEndpoints parse(String text) {
        Objects.requireNonNull(text, "etcd endpoints must not be null");
        List<URI> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String s = part.strip();
            try {
                out.add(new URI(s));
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("etcd endpoint must be http://host:port, got '" + s + "'");
            }
        }
        return new EtcdEndpoints(out);
    }

    @Override
    public String toString() {
        return String.join(",", urls.stream().map(URI::toString).toList());
    }
}
