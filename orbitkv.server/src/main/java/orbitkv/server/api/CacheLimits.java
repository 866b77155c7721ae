package orbitkv.server.api;

import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;

/**
 * The answer of {@code GET /cache/limits} (issue 35, G2): the bounds a client must respect, taken from the running
 * configuration, so that clients split batches and size blocks by what this Manager enforces instead of copying
 * docs/api.md's defaults. Open like {@code /health} (no token, probe slots); serialized in snake_case.
 *
 * @param apiVersion the HTTP API version (1)
 * @param blockBytesMax {@code --block-bytes-max}: payload bytes of one block
 * @param saveBodyBytesMax {@code --save-body-bytes-max}: body bytes of one save (also bounds one restore response)
 * @param jsonBodyBytesMax {@code --json-body-bytes-max}: body bytes of one JSON request
 * @param keysPerRequestMax keys of one query, restore or evict
 * @param recordsPerSaveMax records of one save body
 * @param keyBytesMax bytes of one key (hex strings carry twice as many characters)
 * @param namespaceBytesMax UTF-8 bytes of one namespace
 * @param restoreBytesInFlightMax {@code --restore-bytes-in-flight-max}: restore response bytes held at once across
 *        requests (beyond it a restore stops with {@code response-memory})
 * @param recordFramingBytes the fixed bytes of one block framing record besides its key and payload
 * @param tokenRequired whether save, evict, sync and await need the bearer token ({@code --http-token-file})
 * @param readTokenRequired whether query, restore, status, routes and residences need a token
 *        ({@code --http-read-token-file}; the write token is accepted there too)
 * @param streamedRestore whether {@code /cache/restore} offers a streamed answer ({@code "stream": true}, issue 35 item 4)
 */
public record CacheLimits(int apiVersion, long blockBytesMax, long saveBodyBytesMax, long jsonBodyBytesMax, int keysPerRequestMax,
                          int recordsPerSaveMax, int keyBytesMax, int namespaceBytesMax, long restoreBytesInFlightMax,
                          int recordFramingBytes, boolean tokenRequired, boolean readTokenRequired, boolean streamedRestore) {
    public static final int API_VERSION = 1;

    /**
     * The limits of a server whose body and block bounds are given, with the request bounds of this API (keys, records,
     * key and namespace bytes, framing) filled in.
     */
    public static CacheLimits of(long blockBytesMax, long saveBodyBytesMax, long jsonBodyBytesMax,
                                 long restoreBytesInFlightMax, boolean tokenRequired, boolean readTokenRequired) {
        return new CacheLimits(API_VERSION, blockBytesMax, saveBodyBytesMax, jsonBodyBytesMax, JsonRequests.KEYS_MAX,
                BlockFraming.RECORDS_MAX, StateKey.MAX_KEY_BYTES, Namespace.MAX_BYTES, restoreBytesInFlightMax,
                BlockFraming.RECORD_HEADER_BYTES, tokenRequired, readTokenRequired, true);
    }
}
