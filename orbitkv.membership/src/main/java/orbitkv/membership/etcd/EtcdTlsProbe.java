package orbitkv.membership.etcd;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import orbitkv.membership.EtcdEndpoints;

/**
 * A direct TLS probe of the etcd endpoints with the very {@link SslContext} the jetcd client uses (issue 33: a
 * TLS misconfiguration used to surface only as "etcd call timed out" after 5 registration attempts, 14–17 s).
 * Each endpoint gets one TCP connection with Netty's {@code SslHandler}; after the handshake the probe sends the
 * HTTP/2 connection preface and an empty SETTINGS frame, so a server that checks the client certificate only
 * after the client's Finished (TLS 1.3) either answers (accepted) or sends its alert (refused). Every endpoint is
 * probed in parallel within {@link #DEADLINE_MS}.
 *
 * <p>Only a handshake refusal on <em>every</em> endpoint is a result: an endpoint that accepts, cannot be
 * reached, or does not answer within the deadline leaves the diagnosis to the registration itself (its call
 * deadlines and retries), so the probe never refuses a cluster that jetcd could reach.
 */
final class EtcdTlsProbe {
    /** The product deadline (issue 33): a TLS refusal is named within this of the first registration attempt. */
    static final long DEADLINE_MS = 2_000;
    /** The HTTP/2 client connection preface followed by an empty SETTINGS frame (RFC 9113 §3.4, §6.5). */
    private static final byte[] H2_PREFACE;

    static {
        byte[] magic = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        H2_PREFACE = new byte[magic.length + 9];
        System.arraycopy(magic, 0, H2_PREFACE, 0, magic.length);
        H2_PREFACE[magic.length + 3] = 0x4; // length 0, type SETTINGS, flags 0, stream 0
    }

    private EtcdTlsProbe() {}

    /** One endpoint's outcome: refused (with the named cause) or not (accepted, unreachable, undecided). */
    private record Outcome(URI endpoint, String refusal) {}

    /**
     * Probes every endpoint of {@code endpoints} (which must have TLS) with {@code context}.
     *
     * @return the message naming each endpoint's handshake refusal when every endpoint refused, else empty
     */
    static Optional<String> everyEndpointRefused(EtcdEndpoints endpoints, SslContext context, long deadlineMs) {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            List<CompletableFuture<Outcome>> probes = new ArrayList<>();
            for (URI u : endpoints.urls()) {
                probes.add(probe(group, context, u, deadlineMs));
            }
            List<String> refusals = new ArrayList<>();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMs);
            for (CompletableFuture<Outcome> p : probes) {
                Outcome o;
                try {
                    o = p.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (Exception undecided) {
                    return Optional.empty(); // no answer in time: the registration's own deadlines decide
                }
                if (o.refusal() == null) {
                    return Optional.empty();
                }
                refusals.add(o.endpoint() + ": " + o.refusal());
            }
            String validity = endpoints.tls().map(EtcdTlsProbe::clientCertificateOutOfValidity).orElse("");
            return Optional.of("etcd TLS handshake failed (" + String.join("; ", refusals) + ")" + validity);
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        }
    }

    private static CompletableFuture<Outcome> probe(EventLoopGroup group, SslContext context, URI u, long deadlineMs) {
        CompletableFuture<Outcome> result = new CompletableFuture<>();
        String host = u.getHost();
        int port = u.getPort();
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, deadlineMs))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(context.newHandler(ch.alloc(), host, port), new ProbeHandler(u, result));
                    }
                });
        ChannelFuture connect = b.connect(host, port);
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                result.complete(new Outcome(u, null)); // not a TLS problem: jetcd reports what it finds
            }
        });
        result.whenComplete((o, t) -> connect.channel().close());
        return result;
    }

    /** Completes {@code result} from the handshake event, the server's first bytes, an alert or a close. */
    private static final class ProbeHandler extends ChannelInboundHandlerAdapter {
        private final URI endpoint;
        private final CompletableFuture<Outcome> result;
        private boolean handshaken;

        ProbeHandler(URI endpoint, CompletableFuture<Outcome> result) {
            this.endpoint = endpoint;
            this.result = result;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof SslHandshakeCompletionEvent e) {
                if (!e.isSuccess()) {
                    result.complete(new Outcome(endpoint, describe(e.cause(), false)));
                } else {
                    handshaken = true;
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(H2_PREFACE));
                }
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            result.complete(new Outcome(endpoint, null)); // the server spoke after the handshake: TLS is fine
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            result.complete(new Outcome(endpoint, tlsCause(cause) ? describe(cause, handshaken) : null));
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            result.complete(new Outcome(endpoint, null));
        }
    }

    /**
     * A note when the client certificate is expired or not yet valid (etcd's alert names only "bad certificate"),
     * else "".
     */
    static String clientCertificateOutOfValidity(orbitkv.membership.EtcdTls tls) {
        try (var in = java.nio.file.Files.newInputStream(tls.certFile())) {
            var cert = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in);
            try {
                cert.checkValidity();
                return "";
            } catch (CertificateExpiredException e) {
                return "; --etcd-cert-file " + tls.certFile() + " expired at " + cert.getNotAfter().toInstant();
            } catch (CertificateNotYetValidException e) {
                return "; --etcd-cert-file " + tls.certFile() + " is not valid before " + cert.getNotBefore().toInstant();
            }
        } catch (java.io.IOException | java.security.cert.CertificateException | ClassCastException unreadable) {
            return ""; // the client context loaded it; nothing more to say here
        }
    }

    private static boolean tlsCause(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause()) {
            if (x instanceof SSLException) {
                return true;
            }
        }
        return false;
    }

    /** The operator's reading of a handshake failure, followed by the provider's own words. */
    static String describe(Throwable cause, boolean afterHandshake) {
        String text = chain(cause);
        String lower = text.toLowerCase(java.util.Locale.ROOT);
        String reading;
        if (has(cause, NotSslRecordException.class) || lower.contains("not an ssl/tls record")
                || lower.contains("unsupported or unrecognized ssl message")) {
            reading = "the endpoint does not speak TLS (a plaintext etcd behind https://?)";
        } else if (has(cause, CertificateExpiredException.class) || has(cause, CertificateNotYetValidException.class)
                || lower.contains("expired") || lower.contains("validity")) {
            reading = "a certificate is expired or not yet valid";
        } else if (lower.contains("subject alternative name") || lower.contains("hostname")
                || lower.contains("no name matching")) {
            reading = "the etcd server's certificate does not name this host";
        } else if (lower.contains("pkix") || lower.contains("certification path") || lower.contains("unable to find valid")
                || lower.contains("signature check failed") || lower.contains("certificate_verify_failed")) {
            // checked before the alert words: the JDK reports its own verification failure as "(certificate_unknown)"
            reading = "the etcd server's certificate does not verify against --etcd-ca-file";
        } else if (afterHandshake || lower.contains("received fatal alert") || lower.contains("bad_certificate")
                || lower.contains("certificate_required") || lower.contains("unknown_ca")) {
            reading = "etcd refused this client's certificate (--etcd-cert-file, --etcd-key-file; not signed by a CA etcd trusts?)";
        } else {
            reading = "the TLS handshake failed";
        }
        return reading + ": " + text;
    }

    private static boolean has(Throwable t, Class<? extends Throwable> type) {
        for (Throwable x = t; x != null; x = x.getCause()) {
            if (type.isInstance(x)) {
                return true;
            }
        }
        return false;
    }

    /** Each distinct message of the cause chain, outermost first (bounded). */
    private static String chain(Throwable t) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        for (Throwable x = t; x != null && depth < 6; x = x.getCause(), depth++) {
            String m = x.getClass().getSimpleName() + (x.getMessage() == null ? "" : ": " + x.getMessage());
            String key = x.getMessage() == null ? m : x.getMessage();
            if (parts.stream().noneMatch(p -> p.contains(key))) {
                parts.add(m);
            }
        }
        return String.join(" <- ", parts);
    }
}
