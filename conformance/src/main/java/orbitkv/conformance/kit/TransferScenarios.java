package orbitkv.conformance.kit;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.UUID;
import java.util.function.IntFunction;
import java.util.zip.CRC32C;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.NodeEpoch;
import orbitkv.membership.NodeId;
import orbitkv.transfer.wire.AuthorizeRequest;
import orbitkv.transfer.wire.AuthorizeResponse;
import orbitkv.transfer.wire.Authorized;
import orbitkv.transfer.wire.BlockRef;
import orbitkv.transfer.wire.BlockResult;

/**
 * The {@code transfer} rows (issue 40 item 5; {@code transfer.table}): the kit is a requester of the target's
 * transfer protocol {@code orbitkv.transfer.v1}, black-box: Authorize and Release on the target's peer listener
 * ({@link TransferCalls}), BIND and READ on the data listener the Authorize answer names ({@link DataWire}), and
 * Authorize asked on that listener itself (the AUTHORIZE frame, issue 37 item 5; optional for a target: N/A without it). It
 * speaks as the kit's registered requester members (admitted by the target, MEM-11) about the kit's saved blocks,
 * whose residency sequences it reads from {@code /cache/query} (evidence only: INV-2, the target validates). After
 * each row the kit releases what it was granted and compares the target's {@code orbitkv_transfer_grants_outstanding}
 * gauge, when exported, with its value before the row.
 */
final class TransferScenarios {
    /** The scenarios of transfer.table this class runs (ConformanceCommandTest checks the table names exactly these). */
    static final List<String> SCENARIOS = List.of("authorize_wrong_protocol", "authorize_wrong_cluster", "authorize_stale_source",
            "authorize_wrong_source", "authorize_unknown_requester", "authorize_no_blocks", "authorize_unknown_intent",
            "authorize_duplicate_key", "stale_generation", "not_resident", "read_granted", "already_read", "block_not_granted",
            "grant_unknown", "not_bound", "bad_secret", "malformed_frame", "release_then_read", "release_other_requester",
            "grant_expiry", "data_authorize_read", "data_authorize_oversized", "data_authorize_malformed_body");
    static final String GRANTS_OUTSTANDING = "orbitkv_transfer_grants_outstanding";
    /** How long after the answer's expiry_ms the grant_expiry row waits before its READ (the source's sweep interval). */
    static final Duration EXPIRY_SLACK = Duration.ofSeconds(1);
    /** The body length data_authorize_oversized announces: 2^31 - 1, beyond any sane authorizeRequestBytesMax. */
    static final long AUTHORIZE_ANNOUNCED_OVERSIZED = Integer.MAX_VALUE;
    private static final byte[] GARBAGE = {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01}; // a tag of wire type 7: unparseable
    /** The N/A reason of the AUTHORIZE rows against a data channel that answers the frame MALFORMED and closes. */
    static final String NO_AUTHORIZE_FRAME = "the target's data channel has no AUTHORIZE frame (it answered MALFORMED and closed "
            + "the connection); the frame is optional: requesters ask over the gRPC Authorize call";

    private final KitSettings settings;
    private final TargetApi api;
    private final Incarnation target;
    private final UUID clusterUuid;
    private final String namespace;
    private final IntFunction<Incarnation> requesters;
    private final Duration wait;
    private final SecureRandom random = new SecureRandom();
    private volatile TransferCalls calls;
    private volatile DataWire data;
    private RowDeadline deadline;
    private RowLog seen;
    private long sequence0;

    /** {@code requesters}: the kit's registered requester members 1..3 (the source rows register them). */
    TransferScenarios(KitSettings settings, TargetApi api, Incarnation target, UUID clusterUuid, String namespace,
            IntFunction<Incarnation> requesters) {
        this.settings = settings;
        this.api = api;
        this.target = target;
        this.clusterUuid = clusterUuid;
        this.namespace = namespace;
        this.requesters = requesters;
        this.wait = settings.answerBound();
    }

    /** Runs one row within {@code deadline}; returns the outcome token. */
    String run(ScenarioRow row, RowDeadline deadline, RowLog seen) throws Exception {
        this.deadline = deadline;
        this.seen = seen;
        sequence0 = residencySequence(0);
        OptionalDouble grantsBefore = api.sample(GRANTS_OUTSTANDING, Map.of());
        calls = new TransferCalls(settings.targetPeer(), settings.peerTls());
        try {
            String outcome = scenario(row.scenario());
            if (grantsBefore.isPresent()) {
                Expect.within(deadline.bound(wait), GRANTS_OUTSTANDING + " back at " + grantsBefore.getAsDouble()
                        + " (a refusal takes no pin; the kit released its grants)", () -> api.sample(GRANTS_OUTSTANDING, Map.of())
                                .orElse(-1) == grantsBefore.getAsDouble());
            }
            return outcome;
        } finally {
            cancel();
        }
    }

    /** The row's deadline passed (or it ended): closes its channels and data connection. */
    void cancel() {
        try {
            DataWire d = data;
            if (d != null) {
                d.close();
            }
            TransferCalls c = calls;
            if (c != null) {
                c.close();
            }
        } catch (IOException e) {
            // closing a socket the target already closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private String scenario(String name) throws Exception {
        if (!SCENARIOS.contains(name)) {
            throw new IllegalArgumentException("no transfer scenario named " + name);
        }
        Incarnation r1 = requesters.apply(1);
        AuthorizeRequest.Builder ok = TransferCalls.request(clusterUuid, r1, target, List.of(block(0, sequence0)));
        return switch (name) {
            case "authorize_wrong_protocol" -> refusal(ok.setProtocol("orbitkv/transfer/v0"));
            case "authorize_wrong_cluster" -> refusal(ok.setClusterUuid(TransferCalls.uuid(UUID.randomUUID())));
            case "authorize_stale_source" -> refusal(ok.setSource(TransferCalls.ref(olderTarget())));
            case "authorize_wrong_source" -> refusal(ok.setSource(TransferCalls.ref(new Incarnation(unregistered(), new NodeEpoch(1),
                    UUID.randomUUID()))));
            case "authorize_unknown_requester" -> refusal(ok.setRequester(TransferCalls.ref(new Incarnation(unregistered(),
                    new NodeEpoch(1), UUID.randomUUID()))));
            case "authorize_no_blocks" -> refusal(ok.clearBlocks());
            case "authorize_unknown_intent" -> refusal(ok.setIntentValue(7));
            case "authorize_duplicate_key" -> refusal(ok.addBlocks(block(0, sequence0)));
            case "stale_generation" -> blockRefusal(ok.setBlocks(0, block(0, sequence0 + 1000)), sequence0);
            case "not_resident" -> blockRefusal(ok.setBlocks(0, TransferCalls.block(namespace, HexFormat.of().parseHex("fffe"), 1)), 0);
            case "data_authorize_read", "data_authorize_oversized", "data_authorize_malformed_body" -> authorizeFrame(name, r1, ok.build());
            default -> dataScenario(name, r1, ok.build());
        };
    }

    private String dataScenario(String name, Incarnation r1, AuthorizeRequest request) throws Exception {
        if (name.equals("grant_unknown")) {
            connect(r1, dataEndpointOf(granted(request), r1, true));
            UUID never = UUID.randomUUID();
            data.bind(never, secret());
            return readStatus(never, 0);
        }
        Authorized a = granted(request);
        UUID grant = TransferCalls.uuid(a.getGrantId());
        byte[] secret = a.getGrantSecret().toByteArray();
        try {
            connect(r1, a);
            return switch (name) {
                case "read_granted" -> bindAndRead(grant, secret, a, false);
                case "already_read" -> bindAndRead(grant, secret, a, true);
                case "block_not_granted" -> {
                    data.bind(grant, secret);
                    yield readStatus(grant, 5);
                }
                case "not_bound" -> readStatus(grant, 0);
                case "bad_secret" -> closedStatus(() -> data.bind(grant, secret()));
                case "malformed_frame" -> closedStatus(() -> data.send(new byte[DataWire.REQUEST_BYTES]));
                case "release_then_read" -> releaseThenRead(r1, grant, secret);
                case "release_other_requester" -> releaseByOther(r1, grant, secret, a);
                case "grant_expiry" -> afterExpiry(grant, secret, a);
                default -> throw new IllegalArgumentException("no transfer scenario named " + name);
            };
        } finally {
            releaseQuietly(r1, grant);
        }
    }

    /** Releases {@code grant} of {@code who}: GRANT_UNKNOWN when the row ended it already. */
    private void releaseQuietly(Incarnation who, UUID grant) {
        try {
            calls.release(clusterUuid, who, grant, deadline.bound(wait));
        } catch (StatusRuntimeException | IllegalStateException ended) {
            // the row's channels were closed by its deadline; the grant's expiry is its owner
        }
    }

    /** The AUTHORIZE rows (issue 37 item 5) on a fresh data connection, whose endpoint a gRPC grant names (released at once). */
    private String authorizeFrame(String name, Incarnation r1, AuthorizeRequest request) throws Exception {
        connect(r1, dataEndpointOf(granted(request), r1, true));
        long id = nextId();
        return switch (name) {
            case "data_authorize_read" -> authorizeThenRead(r1, request, id);
            case "data_authorize_oversized" -> {
                data.authorize(AUTHORIZE_ANNOUNCED_OVERSIZED, new byte[0], id); // the header alone: no body follows
                String refusal = refusal(dataAnswer(id), r1.nodeId().value());
                yield (data.closesWithin(deadline.bound(wait)) ? "closed-" : "") + refusal;
            }
            case "data_authorize_malformed_body" -> {
                data.authorize(GARBAGE.length, GARBAGE, id);
                String refusal = refusal(dataAnswer(id), r1.nodeId().value());
                long probe = nextId(); // the connection still serves: a READ behind the refusal is answered with its id
                data.read(UUID.randomUUID(), 0, probe);
                DataWire.Response r = data.response(deadline.bound(wait));
                seen.saw("READ", r.statusName());
                Expect.equal(r.readId(), probe, "the read id of a READ behind the refused AUTHORIZE (the connection still serves)");
                yield refusal;
            }
            default -> throw new IllegalArgumentException("no transfer scenario named " + name);
        };
    }

    /** AUTHORIZE of the kit's block on the data connection, then its READ there with no BIND: the granted answer bound it. */
    private String authorizeThenRead(Incarnation r1, AuthorizeRequest request, long id) throws Exception {
        byte[] body = request.toByteArray();
        data.authorize(body.length, body, id);
        Authorized a = grantOf(dataAnswer(id));
        UUID grant = TransferCalls.uuid(a.getGrantId());
        try {
            return readGranted(grant, a, false);
        } finally {
            releaseQuietly(r1, grant);
        }
    }

    /**
     * The answer to AUTHORIZE {@code id}: status OK, {@code id} echoed, the CRC32C of the AuthorizeResponse bytes after it.
     * MALFORMED (read id 0 or {@code id}) and a close: the target has no such frame (optional), the row is N/A.
     */
    private AuthorizeResponse dataAnswer(long id) throws Exception {
        DataWire.Response r = data.response(deadline.bound(wait));
        if (r.statusName().equals("MALFORMED") && (r.readId() == 0 || r.readId() == id) && data.closesWithin(deadline.bound(wait))) {
            seen.saw("AUTHORIZE frame", "MALFORMED, closed");
            throw ScenarioSkipped.notApplicable(NO_AUTHORIZE_FRAME);
        }
        Expect.equal(r.statusName(), "OK", "the AUTHORIZE answer's status");
        Expect.equal(r.readId(), id, "the AUTHORIZE answer's read id (the request id)");
        CRC32C crc = new CRC32C();
        crc.update(r.payload());
        Expect.equal((int) crc.getValue(), r.crc32c(), "the AUTHORIZE answer's CRC32C over its " + r.payload().length + " bytes");
        AuthorizeResponse answer;
        try {
            answer = AuthorizeResponse.parseFrom(r.payload());
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError("the AUTHORIZE answer's bytes are no AuthorizeResponse: " + e.getMessage());
        }
        seen.saw("AUTHORIZE frame", answer.getOutcomeCase() + (answer.hasRefused() ? " " + answer.getRefused().getReason() : ""));
        return answer;
    }

    private String refusal(AuthorizeRequest.Builder request) {
        return refusal(authorize(request.build()), request.getRequester().getNodeId());
    }

    /** {@code refused:REASON}, or {@code authorized} (its grant released) for an answer that should have refused. */
    private String refusal(AuthorizeResponse r, String requester) {
        if (r.hasAuthorized()) {
            release(requester, r.getAuthorized());
            return "authorized";
        }
        Expect.that(r.hasRefused(), "the Authorize answer is authorized or refused");
        return "refused:" + r.getRefused().getReason().name();
    }

    /** The one block's refusal; {@code current} > 0: the refusal must name it as the current sequence. */
    private String blockRefusal(AuthorizeRequest.Builder request, long current) {
        AuthorizeResponse r = authorize(request.build());
        if (r.hasRefused()) {
            return "refused:" + r.getRefused().getReason().name();
        }
        Authorized a = r.getAuthorized();
        Expect.equal(a.getBlocksCount(), 1, "one BlockResult per requested block");
        if (a.hasGrantId()) {
            release(request.getRequester().getNodeId(), a);
        }
        BlockResult b = a.getBlocks(0);
        if (b.hasGranted()) {
            return "granted";
        }
        Expect.that(!a.hasGrantId(), "no grant id when no block was granted (nothing pinned)");
        if (current > 0) {
            Expect.equal(b.getRefused().getCurrentSequence(), current, "STALE_GENERATION's current_sequence (the resident one)");
        }
        return "block:" + b.getRefused().getReason().name();
    }

    private Authorized granted(AuthorizeRequest request) {
        return grantOf(authorize(request));
    }

    /** The answer's grant of the kit's one 64-byte block (secret, length checked). */
    private static Authorized grantOf(AuthorizeResponse r) {
        Expect.that(r.hasAuthorized(), "a well-formed Authorize of a resident block is authorized, got " + r.getRefused());
        Authorized a = r.getAuthorized();
        Expect.that(a.hasGrantId() && a.getBlocksCount() == 1 && a.getBlocks(0).hasGranted(),
                "the kit's resident block is granted, got " + a.getBlocksList());
        Expect.equal(a.getGrantSecret().size(), 16, "grant_secret bytes");
        Expect.equal(a.getBlocks(0).getGranted().getLength(), 64L, "the granted length (the kit saved 64 bytes)");
        return a;
    }

    private AuthorizeResponse authorize(AuthorizeRequest request) {
        try {
            AuthorizeResponse r = calls.authorize(request, deadline.bound(wait));
            seen.saw("AUTHORIZE", r.getOutcomeCase() + (r.hasRefused() ? " " + r.getRefused().getReason() : ""));
            return r;
        } catch (StatusRuntimeException e) {
            throw new AssertionError("Authorize failed in transport: " + e.getStatus());
        }
    }

    private void release(String node, Authorized a) {
        Incarnation who = node.equals(requesters.apply(1).nodeId().value()) ? requesters.apply(1) : null;
        if (who != null) {
            calls.release(clusterUuid, who, TransferCalls.uuid(a.getGrantId()), deadline.bound(wait));
        } // a grant to a foreign requester id is left to the target's expiry (it should never have been issued)
    }

    private String bindAndRead(UUID grant, byte[] secret, Authorized a, boolean twice) throws IOException {
        data.bind(grant, secret);
        return readGranted(grant, a, twice);
    }

    /** READ of block 0 of {@code grant} on the bound connection: OK with the saved block's bytes; {@code twice}: again. */
    private String readGranted(UUID grant, Authorized a, boolean twice) throws IOException {
        data.read(grant, 0, 41);
        DataWire.Response first = data.response(deadline.bound(wait));
        seen.saw("READ", first.statusName());
        if (first.status() != 0) {
            return "read:" + first.statusName();
        }
        checkPayload(first, a, 41);
        return twice ? readStatus(grant, 0) : "read:OK";
    }

    private void checkPayload(DataWire.Response r, Authorized a, long readId) {
        Expect.equal(r.readId(), readId, "the response's read id");
        CRC32C crc = new CRC32C();
        crc.update(r.payload());
        Expect.equal((int) crc.getValue(), a.getBlocks(0).getGranted().getCrc32C(), "the payload's CRC32C against the grant's");
        Expect.that(Arrays.equals(r.payload(), TargetApi.payload(1, 0, 64)), "the payload is the block the kit saved");
    }

    /** A random positive read or request id (never 0: a refusal's read id). */
    private long nextId() {
        return random.nextLong() & Long.MAX_VALUE | 1;
    }

    private String readStatus(UUID grant, int index) throws IOException {
        long id = nextId();
        data.read(grant, index, id);
        DataWire.Response r = data.response(deadline.bound(wait));
        seen.saw("READ", r.statusName());
        Expect.equal(r.readId(), id, "the response's read id");
        return "read:" + r.statusName();
    }

    private interface WireStep {
        void run() throws IOException;
    }

    private String closedStatus(WireStep step) throws IOException {
        step.run();
        DataWire.Response r = data.response(deadline.bound(wait));
        seen.saw("REFUSAL", r.statusName());
        Expect.that(data.closesWithin(deadline.bound(wait)), r.statusName() + " closes the connection within " + wait.toMillis() + " ms");
        return "closed:" + r.statusName();
    }

    private String releaseThenRead(Incarnation r1, UUID grant, byte[] secret) throws IOException {
        data.bind(grant, secret);
        Expect.equal(calls.release(clusterUuid, r1, grant, deadline.bound(wait)).getStatus().name(), "RELEASED", "the first Release");
        String read = readStatus(grant, 0);
        Expect.equal(calls.release(clusterUuid, r1, grant, deadline.bound(wait)).getStatus().name(), "GRANT_UNKNOWN", "a second Release");
        return read;
    }

    private String releaseByOther(Incarnation r1, UUID grant, byte[] secret, Authorized a) throws IOException {
        String status = calls.release(clusterUuid, requesters.apply(2), grant, deadline.bound(wait)).getStatus().name();
        Expect.equal(bindAndRead(grant, secret, a, false), "read:OK", "the owner's READ after another requester's Release");
        return "release:" + status;
    }

    private String afterExpiry(UUID grant, byte[] secret, Authorized a) throws Exception {
        Duration expiry = Duration.ofMillis(a.getExpiryMs()).plus(EXPIRY_SLACK);
        if (expiry.plus(wait).compareTo(deadline.remaining()) > 0) {
            throw ScenarioSkipped.notApplicable("the target's grant expiry_ms " + a.getExpiryMs() + " plus " + EXPIRY_SLACK.toMillis()
                    + " ms and --wait-ms exceeds what is left of --row-deadline-ms; give a longer row deadline");
        }
        data.bind(grant, secret);
        long until = System.nanoTime() + expiry.toNanos();
        while (System.nanoTime() - until < 0) { // no event to await: the expiry is the target's clock, observed by waiting
            Thread.sleep(Math.max(1, (until - System.nanoTime()) / 1_000_000));
        }
        return readStatus(grant, 0);
    }

    private void connect(Incarnation who, Authorized a) throws IOException {
        connect(who, dataEndpointOf(a, who));
    }

    private void connect(Incarnation who, Endpoint ep) throws IOException {
        data = DataWire.connect(ep, settings.peerTls(), who.nodeId().value(), deadline.bound(wait));
    }

    /** The answer's data endpoint. */
    private Endpoint dataEndpointOf(Authorized a, Incarnation who) {
        Expect.that(a.hasData() && a.getData().getPort() > 0 && a.getData().getPort() < 65536, "the answer names a data endpoint");
        return new Endpoint(a.getData().getHost(), a.getData().getPort());
    }

    /** The answer's data endpoint, the grant {@code a} released when it only served to learn it. */
    private Endpoint dataEndpointOf(Authorized a, Incarnation who, boolean release) {
        Endpoint ep = dataEndpointOf(a, who);
        if (release) {
            calls.release(clusterUuid, who, TransferCalls.uuid(a.getGrantId()), deadline.bound(wait));
        }
        return ep;
    }

    private BlockRef block(int i, long sequence) {
        return TransferCalls.block(namespace, HexFormat.of().parseHex(SourceScenarios.keyHex(i)), sequence);
    }

    /** The target's residency sequence of kit block {@code i} in DRAM, read from /cache/query (evidence, INV-2). */
    private long residencySequence(int i) {
        String key = SourceScenarios.keyHex(i);
        JsonNode q = api.query(namespace, List.of(key));
        for (JsonNode c : q.path("candidates")) {
            for (JsonNode rep : c.path("replicas")) {
                if (c.path("key").asText().equals(key) && rep.path("medium").asText().equals("DRAM")
                        && target.toString().equals(rep.at("/owner/incarnation").asText())) {
                    return rep.path("sequence").asLong();
                }
            }
        }
        throw new AssertionError("the target lists no DRAM residence of the kit's block " + key + " in " + namespace + ": " + q);
    }

    private NodeId unregistered() {
        return new NodeId(settings.memberPrefix() + "-" + KitPeerTls.UNREGISTERED);
    }

    /** An older incarnation of the target's node: epoch - 1, or (at epoch 1) the same epoch with another id. */
    private Incarnation olderTarget() {
        long e = target.epoch().value();
        return new Incarnation(target.nodeId(), new NodeEpoch(e > 1 ? e - 1 : e), UUID.randomUUID());
    }

    private byte[] secret() {
        byte[] s = new byte[16];
        random.nextBytes(s);
        return s;
    }
}
