package orbitkv.membership.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import orbitkv.membership.EtcdEndpoints;
import orbitkv.membership.EtcdTls;

/**
 * Every etcd call has a deadline (NOTES: after a leader loss a request stalls ≈ 7 s and jetcd does not
 * retry): a gRPC interceptor puts {@code etcdCallTimeoutMs} on every call except the long-lived watch
 * stream, and {@link #await} bounds the wait on the future as well. Retrying is the caller's decision
 * and only ever repeats idempotent or compare-guarded requests.
 */
public final class EtcdCalls {
    private static final String WATCH_METHOD = "etcdserverpb.Watch/Watch";

    private EtcdCalls() {}

    /**
     * A jetcd client whose unary calls carry {@code callTimeoutMs} as a gRPC deadline; over TLS with a client
     * certificate when {@code endpoints} has {@link EtcdTls} ({@code https://} endpoints, etcd's
     * {@code --client-cert-auth}). Every etcd client of this module (membership and the admin tool) is built here.
     *
     * @throws IllegalArgumentException naming the files if the CA, certificate or key cannot be loaded
     */
    public static Client client(EtcdEndpoints endpoints, long callTimeoutMs) {
        ClientBuilder builder = Client.builder()
                .endpoints(endpoints.urls())
                .connectTimeout(Duration.ofMillis(callTimeoutMs))
                .interceptor(new DeadlineInterceptor(callTimeoutMs));
        endpoints.tls().ifPresent(tls -> builder.sslContext(sslContext(tls)));
        return builder.build();
    }

    /**
     * The client TLS context: the etcd servers are verified against {@code caFile} (host names included, as
     * gRPC does), and this client presents {@code certFile} with its PKCS#8 {@code keyFile}.
     */
    static SslContext sslContext(EtcdTls tls) {
        try {
            return GrpcSslContexts.forClient()
                    .trustManager(tls.caFile().toFile())
                    .keyManager(tls.certFile().toFile(), tls.keyFile().toFile())
                    .build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("etcd TLS: cannot load CA " + tls.caFile() + ", certificate "
                    + tls.certFile() + " or key " + tls.keyFile() + " (PEM, key in PKCS#8): " + e.getMessage(), e);
        }
    }

    /** Builds a client and closes it; no request is sent (see {@code Membership#checkClientConstruction}). */
    public static void constructAndClose(EtcdEndpoints endpoints) {
        try (Client client = client(endpoints, 1_000)) {
            if (client.getKVClient() == null) {
                throw new IllegalStateException("jetcd returned no KV client");
            }
        }
    }

    /** Thrown when a call failed, timed out, or etcd answered with an error status. */
    public static final class EtcdCallFailed extends Exception {
        private final Status.Code code;

        EtcdCallFailed(String message, Status.Code code, Throwable cause) {
            super(message, cause);
            this.code = code;
        }

        /** The gRPC status code, DEADLINE_EXCEEDED for a local timeout, UNKNOWN if none. */
        public Status.Code code() {
            return code;
        }

        /** A read at a compacted revision (raw OUT_OF_RANGE, not mapped by jetcd): a membership gap (MEM-9). */
        public boolean compacted() {
            return code == Status.Code.OUT_OF_RANGE;
        }

        /** etcd said the lease does not exist (expired or revoked). */
        public boolean leaseNotFound() {
            return code == Status.Code.NOT_FOUND
                    || (getMessage() != null && getMessage().contains("requested lease not found"));
        }
    }

    /** Waits for {@code future} at most {@code timeoutMs}; cancels it on timeout. */
    public static <T> T await(CompletableFuture<T> future, long timeoutMs) throws EtcdCallFailed {
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new EtcdCallFailed("etcd call timed out after " + timeoutMs + " ms", Status.Code.DEADLINE_EXCEEDED, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(true);
            throw new EtcdCallFailed("interrupted while waiting for etcd", Status.Code.CANCELLED, e);
        } catch (ExecutionException | CompletionException | CancellationException e) {
            throw classify(e);
        }
    }

    /** Maps any failure of an etcd future to {@link EtcdCallFailed} with its gRPC status code. */
    public static EtcdCallFailed classify(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof EtcdCallFailed f) {
            return f;
        }
        Status.Code code = Status.Code.UNKNOWN;
        for (Throwable x = c; x != null; x = x.getCause()) {
            if (x instanceof StatusRuntimeException s) {
                code = s.getStatus().getCode();
                break;
            }
            if (x instanceof io.grpc.StatusException s) {
                code = s.getStatus().getCode();
                break;
            }
            if (x instanceof io.etcd.jetcd.common.exception.EtcdException e) {
                code = Status.Code.valueOf(e.getErrorCode().name());
                break;
            }
        }
        return new EtcdCallFailed(String.valueOf(c), code, c);
    }

    /** Puts a deadline on every call except the watch stream (which lives as long as the membership). */
    static final class DeadlineInterceptor implements ClientInterceptor {
        private final long timeoutMs;

        DeadlineInterceptor(long timeoutMs) {
            this.timeoutMs = timeoutMs;
        }

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            if (WATCH_METHOD.equals(method.getFullMethodName()) || options.getDeadline() != null) {
                return next.newCall(method, options);
            }
            return next.newCall(method, options.withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS));
        }
    }
}
