package orbitkv.server.http;

import io.netty.buffer.CompositeByteBuf;
import orbitkv.inventory.Namespace;

/**
 * A request of one connection being received or executed ({@link HttpApiHandler}). Its slot and reserved body bytes
 * are released exactly once; a save that is dropped before its commit is aborted (it stores nothing).
 */
final class InFlightRequest {
    final ApiEndpoint endpoint;
    final boolean keepAlive;
    final RequestTarget target;
    final Namespace saveNamespace;
    /** A save streaming into DRAM reservations; aborted wherever the request is dropped before its commit. */
    final CacheApi.SaveStream save;
    final CompositeByteBuf bytes;
    /** The declared Content-Length, or -1 (chunked): then each chunk is reserved as it arrives. */
    final long declaredBytes;
    long received;
    long reservedBytes;
    boolean slot;
    /** Stage stamps (System.nanoTime) for {@link HttpRequestEvent}: headers decoded, dispatched, running, answered. */
    final long headersNanos = System.nanoTime();
    long dispatchedNanos;
    long executingNanos;
    long respondedNanos;
    int answeredStatus;
    /** The answer's body bytes; -1 for a streamed answer. */
    long answeredBytes = -1;

    InFlightRequest(ApiEndpoint endpoint, boolean keepAlive, RequestTarget target, Namespace saveNamespace,
            CacheApi.SaveStream save, CompositeByteBuf bytes, long declaredBytes) {
        this.endpoint = endpoint;
        this.keepAlive = keepAlive;
        this.target = target;
        this.saveNamespace = saveNamespace;
        this.save = save;
        this.bytes = bytes;
        this.declaredBytes = declaredBytes;
    }

    /** Drops what the request received: its JSON body bytes and, for a save, its DRAM reservations. */
    void discardBody() {
        if (bytes != null) {
            bytes.release();
        }
        abortSave();
    }

    /** Frees a save's DRAM reservations: a dropped, refused or malformed save stores nothing (issue 20 item 3). */
    void abortSave() {
        if (save != null) {
            save.abort();
        }
    }

    /** Gives back the request slot and the body bytes reserved for {@code client} (each once). */
    void release(HttpAdmission admission, Object client) {
        if (slot) {
            slot = false;
            admission.release(endpoint);
        }
        if (reservedBytes > 0) {
            admission.bodyBytes().release(client, reservedBytes);
            reservedBytes = 0;
        }
    }
}
