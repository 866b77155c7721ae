package orbitkv.server.config;

import static orbitkv.server.config.Setting.ETCD;
import static orbitkv.server.config.Setting.ETCD_CA_FILE;
import static orbitkv.server.config.Setting.ETCD_CERT_FILE;
import static orbitkv.server.config.Setting.ETCD_KEY_FILE;

import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.EtcdTls;

/**
 * {@code --etcd URLS} with {@code --etcd-ca-file}, {@code --etcd-cert-file}, {@code --etcd-key-file}, parsed
 * into membership's {@link EtcdEndpoints} contract. Every refusal names the options as typed; the PEM files
 * are parsed here (with Netty's TLS context builder), so a bad file refuses the start before etcd is
 * contacted. Shared by {@code orbitkv manager} and {@code orbitkv admin}.
 */
public final class EtcdOptions {
    private EtcdOptions() {}

    /**
     * @param urls the {@code --etcd} text
     * @param ca {@code --etcd-ca-file} or null
     * @param cert {@code --etcd-cert-file} or null
     * @param key {@code --etcd-key-file} or null
     * @throws ConfigException naming the options at fault
     */
    public static EtcdEndpoints parse(String urls, Path ca, Path cert, Path key) {
        List<URI> list = urls(urls);
        boolean https = list.stream().anyMatch(u -> "https".equals(u.getScheme()));
        boolean anyFile = ca != null || cert != null || key != null;
        if (list.stream().anyMatch(u -> !"https".equals(u.getScheme())) && https) {
            throw new ConfigException(ETCD.flag() + " must list only http:// or only https:// URLs, got '" + urls + "'");
        }
        if (https && !anyFile) {
            throw new ConfigException(ETCD.flag() + " lists https:// endpoints: give " + ETCD_CA_FILE.flag() + ", "
                    + ETCD_CERT_FILE.flag() + " and " + ETCD_KEY_FILE.flag());
        }
        if (!anyFile) {
            return new EtcdEndpoints(list);
        }
        List<String> missing = new ArrayList<>();
        if (ca == null) {
            missing.add(ETCD_CA_FILE.flag());
        }
        if (cert == null) {
            missing.add(ETCD_CERT_FILE.flag());
        }
        if (key == null) {
            missing.add(ETCD_KEY_FILE.flag());
        }
        if (!missing.isEmpty()) {
            throw new ConfigException(ETCD_CA_FILE.flag() + ", " + ETCD_CERT_FILE.flag() + " and " + ETCD_KEY_FILE.flag()
                    + " go together: " + String.join(" and ", missing) + " missing");
        }
        if (!https) {
            throw new ConfigException(ETCD_CA_FILE.flag() + ", " + ETCD_CERT_FILE.flag() + " and " + ETCD_KEY_FILE.flag()
                    + " need https:// endpoints in " + ETCD.flag() + ", got '" + urls + "'");
        }
        checkPem(ca, cert, key);
        return new EtcdEndpoints(list, Optional.of(new EtcdTls(ca, cert, key)));
    }

    private static List<URI> urls(String text) {
        List<URI> urls = new ArrayList<>();
        String[] parts = text.split(",", -1);
        if (parts.length > EtcdEndpoints.MAX_ENDPOINTS) {
            throw new ConfigException(ETCD.flag() + " lists " + parts.length + " URLs; at most " + EtcdEndpoints.MAX_ENDPOINTS);
        }
        for (String part : parts) {
            String p = part.strip();
            URI uri;
            try {
                uri = new URI(p);
            } catch (URISyntaxException e) {
                throw malformed(p);
            }
            boolean scheme = "http".equals(uri.getScheme()) || "https".equals(uri.getScheme());
            if (!scheme || uri.getHost() == null || uri.getPort() < 1 || uri.getRawUserInfo() != null
                    || (uri.getRawPath() != null && !uri.getRawPath().isEmpty()) || uri.getRawQuery() != null
                    || uri.getRawFragment() != null) {
                throw malformed(p);
            }
            urls.add(uri);
        }
        return urls;
    }

    private static ConfigException malformed(String url) {
        return new ConfigException(ETCD.flag() + " must be a comma-separated list of http://host:port (or https://host:port),"
                + " got '" + url + "'");
    }

    private static void checkPem(Path ca, Path cert, Path key) {
        PeerTls.readable(ETCD_CA_FILE, ca);
        PeerTls.readable(ETCD_CERT_FILE, cert);
        PeerTls.readable(ETCD_KEY_FILE, key);
        try {
            SslContextBuilder.forClient().trustManager(ca.toFile()).build();
        } catch (Exception e) {
            throw new ConfigException(ETCD_CA_FILE.flag() + " " + ca + " holds no usable PEM CA certificate: " + e.getMessage());
        }
        try {
            SslContextBuilder.forClient().keyManager(cert.toFile(), key.toFile()).build();
        } catch (Exception e) {
            throw new ConfigException(ETCD_CERT_FILE.flag() + " " + cert + " and " + ETCD_KEY_FILE.flag() + " " + key
                    + " must be a PEM certificate and its PEM (PKCS#8) private key: " + e.getMessage());
        }
    }
}
