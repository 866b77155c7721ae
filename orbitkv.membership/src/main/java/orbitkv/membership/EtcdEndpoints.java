package orbitkv.membership;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The etcd client URLs of the coordinator cluster ({@code --etcd URLS}): 1..16 URLs without path, query or
 * credentials, either all {@code http://host:port} (the trusted-cluster posture, docs/operations.md) or all
 * {@code https://host:port} with client TLS settings.
 *
 * @param urls the URLs, in the operator's order
 * @param tls client TLS; present iff every URL is {@code https}
 */
public record EtcdEndpoints(List<URI> urls, Optional<EtcdTls> tls) {
    /** At most this many endpoints. */
    public static final int MAX_ENDPOINTS = 16;

    public EtcdEndpoints {
        Objects.requireNonNull(urls, "etcd endpoints must not be null");
        if (urls.isEmpty() || urls.size() > MAX_ENDPOINTS) {
            throw new IllegalArgumentException(
                    "etcd endpoints must list 1.." + MAX_ENDPOINTS + " URLs, got " + urls.size());
        }
        Objects.requireNonNull(tls, "etcd TLS must not be null (use Optional.empty())");
        String scheme = tls.isPresent() ? "https" : "http";
        for (URI u : urls) {
            if (tls.isEmpty() && "https".equals(u.getScheme())) {
                throw new IllegalArgumentException("etcd endpoint '" + u
                        + "' is https: give the etcd CA, client certificate and key files");
            }
            if (!scheme.equals(u.getScheme()) || u.getHost() == null || u.getPort() < 1
                    || (u.getRawPath() != null && !u.getRawPath().isEmpty() && !u.getRawPath().equals("/"))
                    || u.getRawQuery() != null || u.getRawUserInfo() != null) {
                throw new IllegalArgumentException("etcd endpoint must be " + scheme + "://host:port, got '" + u + "'"
                        + (tls.isPresent() ? " (etcd TLS is configured: every endpoint must be https)" : ""));
            }
        }
        urls = List.copyOf(urls);
    }

    /** Plain {@code http} endpoints. */
    public EtcdEndpoints(List<URI> urls) {
        this(urls, Optional.empty());
    }

    /**
     * Parses a comma-separated list such as {@code http://127.0.0.1:2379,http://10.0.0.2:2379}.
     *
     * @throws IllegalArgumentException naming the malformed URL
     */
    public static EtcdEndpoints parse(String text) {
        return parse(text, Optional.empty());
    }

    /**
     * Parses a comma-separated list of {@code https://host:port} URLs used with {@code tls} (or of
     * {@code http://} URLs when {@code tls} is empty).
     *
     * @throws IllegalArgumentException naming the malformed URL
     */
    public static EtcdEndpoints parse(String text, Optional<EtcdTls> tls) {
        Objects.requireNonNull(text, "etcd endpoints must not be null");
        List<URI> out = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String s = part.strip();
            try {
                out.add(new URI(s));
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("etcd endpoint must be " + (tls.isPresent() ? "https" : "http")
                        + "://host:port, got '" + s + "'");
            }
        }
        return new EtcdEndpoints(out, tls);
    }

    @Override
    public String toString() {
        return String.join(",", urls.stream().map(URI::toString).toList());
    }
}
