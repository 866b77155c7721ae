package orbitkv.server.tier;

import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The identity of one process's tiers (issue 20 item 1). The tiers open before registration gives the
 * incarnation (a distributed Manager must hold its SSD directory before any etcd side effect), so the files
 * they create carry this per-process instance id instead; the Manager logs, and writes into the SSD lock
 * file, which incarnation an instance serves once registration has returned ({@link LocalTiers#recordIncarnation}).
 *
 * @param nodeId the configured node id (file-name safe: {@code [A-Za-z0-9._-]})
 * @param id 16 lowercase hex digits, random per process start
 * @param started when the tiers were opened (wall clock, for operators reading the lock file)
 */
public record TierInstance(String nodeId, String id, Instant started) {
    private static final Pattern NODE = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern ID = Pattern.compile("[0-9a-f]{16}");

    public TierInstance {
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(started, "started");
        if (!NODE.matcher(nodeId).matches() || !ID.matcher(id).matches()) {
            throw new IllegalArgumentException("tier instance needs a node id of [A-Za-z0-9._-]{1,64} and 16 hex digits, got "
                    + nodeId + ", " + id);
        }
    }

    /** A new instance of {@code nodeId}, now. */
    public static TierInstance random(String nodeId) {
        return new TierInstance(nodeId, HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()), Instant.now());
    }

    /** {@code <node>-<id>}: the part of file names that says whose file it is. */
    public String fileTag() {
        return nodeId + "-" + id;
    }

    /** The lock file text: who holds the tier, as far as it knows itself. */
    String holderText(String incarnation) {
        return "pid=" + ProcessHandle.current().pid() + "\nnode=" + nodeId + "\ninstance=" + id + "\nstarted=" + started
                + "\nincarnation=" + incarnation + "\n";
    }
}
