package orbitkv.conformance.mutant;

import com.google.protobuf.ByteString;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import orbitkv.conformance.peer.WireFrames;
import orbitkv.inventory.wire.RequesterFrame;
import orbitkv.inventory.wire.SnapshotPage;
import orbitkv.inventory.wire.SourceFrame;

/**
 * A broken InventorySession implementation, made from a correct one (a real Manager) by a
 * {@link WireRewriteProxy} rewriting its frames (issue 26 item 2). Test-only: nothing here ships in the
 * image. {@link Role#SOURCE} mutants rewrite what the Manager sends as a source (the proxy stands in front
 * of its peer listener, and the kit's requester dials the proxy); {@link Role#REQUESTER} mutants rewrite
 * what the Manager sends as a requester (the proxy stands in front of the kit's listener, and the kit's
 * members advertise the proxy). {@link MutantKitTest} runs the kit against each and pins the rows that fail.
 */
enum Mutant {
    /** SES-11: the SnapshotCommit's transcript digest is not the digest of the frames sent. */
    SOURCE_WRONG_DIGEST(Role.SOURCE, "the SnapshotCommit's transcript_digest has its first byte flipped", () -> new StreamRewrite() {
        @Override
        List<SourceFrame> sourceFrame(SourceFrame f) {
            if (!f.hasSnapshotCommit()) {
                return List.of(f);
            }
            byte[] d = f.getSnapshotCommit().getTranscriptDigest().toByteArray();
            d[0] ^= 1;
            return List.of(f.toBuilder().setSnapshotCommit(f.getSnapshotCommit().toBuilder()
                    .setTranscriptDigest(ByteString.copyFrom(d))).build());
        }
    }),
    /** SES-12: frame number 2 is never sent; every later frame is numbered one higher. */
    SOURCE_SKIPPED_SEQUENCE(Role.SOURCE, "frame numbers from 2 on are one higher (frame 2 is skipped)", () -> new StreamRewrite() {
        @Override
        List<SourceFrame> sourceFrame(SourceFrame f) {
            return List.of(f.getFrameNumber() < 2 ? f : f.toBuilder().setFrameNumber(f.getFrameNumber() + 1).build());
        }
    }),
    /** SES-13 SES-14: the source ignores the credit its requester returns: no ACK reaches its accounting. */
    SOURCE_IGNORES_CREDITS(Role.SOURCE, "after the Open, the requester's ACKs never reach the source (returned credit is ignored)",
            () -> new StreamRewrite() {
                private boolean opened;

                @Override
                List<RequesterFrame> requesterFrame(RequesterFrame f) {
                    opened |= f.hasOpen();
                    return opened && f.hasAck() ? List.of() : List.of(f);
                }
            }),
    /**
     * SES-13: the source sends more unacknowledged bytes than the window it granted: OpenAccepted says
     * {@value #GRANTED_WINDOW_BYTES} bytes, and the whole bootstrap follows before any ACK.
     */
    SOURCE_EXCEEDS_WINDOW(Role.SOURCE, "OpenAccepted.window_bytes is " + Mutant.GRANTED_WINDOW_BYTES + " while the source keeps "
            + "the requester's window", () -> new StreamRewrite() {
                @Override
                List<SourceFrame> sourceFrame(SourceFrame f) {
                    return List.of(!f.hasAccepted() ? f : f.toBuilder().setAccepted(f.getAccepted().toBuilder()
                            .setWindowBytes(GRANTED_WINDOW_BYTES)).build());
                }
            }),
    /** SES-4..SES-10: a refused Open gets no Error frame; the stream just ends. */
    SOURCE_NO_ERROR_ON_BAD_OPEN(Role.SOURCE, "the Error answering an Open (frame 1) is dropped; the stream still ends",
            () -> new StreamRewrite() {
                @Override
                List<SourceFrame> sourceFrame(SourceFrame f) {
                    return f.hasError() && f.getFrameNumber() == 1 ? List.of() : List.of(f);
                }
            }),
    /** SNAP-7 SES-12: the SnapshotCommit is sent before the last page/replay frame that S1 covers. */
    SOURCE_COMMIT_BEFORE_S1(Role.SOURCE, "the SnapshotCommit overtakes the bootstrap's last page or replay delta",
            CommitBeforeS1::new),
    /** SES-7 SNAP-7: a snapshot page carries a namespace outside the session's scope. */
    SOURCE_PAGE_OUTSIDE_SCOPE(Role.SOURCE, "every SnapshotPage's namespace table names 'mutant-outside-scope'", () -> new StreamRewrite() {
        @Override
        List<SourceFrame> sourceFrame(SourceFrame f) {
            if (!f.hasSnapshotPage()) {
                return List.of(f);
            }
            SnapshotPage.Builder p = f.getSnapshotPage().toBuilder();
            for (int i = 0; i < p.getNamespacesCount(); i++) {
                p.setNamespaces(i, ByteString.copyFromUtf8("mutant-outside-scope" + (i == 0 ? "" : "-" + i)));
            }
            return List.of(f.toBuilder().setSnapshotPage(p).build());
        }
    }),
    /** DELTA-11 IDX-11: idle liveness advertises a head the source does not have. */
    SOURCE_LIVENESS_WRONG_HEAD(Role.SOURCE, "Liveness.source_head is one above the source's head", () -> new StreamRewrite() {
        @Override
        List<SourceFrame> sourceFrame(SourceFrame f) {
            return List.of(!f.hasLiveness() ? f : f.toBuilder().setLiveness(f.getLiveness().toBuilder()
                    .setSourceHead(f.getLiveness().getSourceHead() + 1)).build());
        }
    }),
    /** SNAP-7: the snapshot never ends: no SnapshotCommit is ever sent. */
    SOURCE_SNAPSHOT_NEVER_ENDS(Role.SOURCE, "every SnapshotCommit is dropped", () -> new StreamRewrite() {
        @Override
        List<SourceFrame> sourceFrame(SourceFrame f) {
            return f.hasSnapshotCommit() ? List.of() : List.of(f);
        }
    }),
    /** SES-5: the requester's Open names a stale incarnation of its node (same node id and epoch, another id). */
    REQUESTER_STALE_INCARNATION(Role.REQUESTER, "Open.requester carries a random incarnation id (a stale incarnation)",
            () -> new StreamRewrite() {
                private final UUID stale = UUID.randomUUID();

                @Override
                List<RequesterFrame> requesterFrame(RequesterFrame f) {
                    return List.of(!f.hasOpen() ? f : f.toBuilder().setOpen(f.getOpen().toBuilder().setRequester(
                            f.getOpen().getRequester().toBuilder().setId(WireFrames.uuid(stale)))).build());
                }
            }),
    /**
     * SES-13: the requester ACKs frames beyond the last frame it received ({@value #ACK_BEYOND} beyond: an
     * ACK only one beyond can cover a frame the kit has sent by the time it reads the ACK, so whether it is
     * caught would depend on timing; see docs/conformance-kit.md, "Mutants").
     */
    REQUESTER_ACK_BEYOND_RECEIVED(Role.REQUESTER, "Ack.consumed_through_frame is " + Mutant.ACK_BEYOND + " above the frame received",
            () -> new StreamRewrite() {
                @Override
                List<RequesterFrame> requesterFrame(RequesterFrame f) {
                    return List.of(!f.hasAck() ? f : f.toBuilder().setAck(f.getAck().toBuilder()
                            .setConsumedThroughFrame(f.getAck().getConsumedThroughFrame() + ACK_BEYOND)).build());
                }
            }),
    /** SES-9..SES-12 SNAP-7 ...: the requester closes a bad session without an Error frame. */
    REQUESTER_NO_ERROR(Role.REQUESTER, "the requester's Error frames are dropped; its stream still ends", () -> new StreamRewrite() {
        @Override
        List<RequesterFrame> requesterFrame(RequesterFrame f) {
            return f.hasError() ? List.of() : List.of(f);
        }
    }),
    /** DELTA-7 SES-14: the requester's ACK names an applied cursor it never installed. */
    REQUESTER_WRONG_APPLIED_CURSOR(Role.REQUESTER, "Ack.applied_cursor is one above the installed watermark", () -> new StreamRewrite() {
        @Override
        List<RequesterFrame> requesterFrame(RequesterFrame f) {
            return List.of(!f.hasAck() ? f : f.toBuilder().setAck(f.getAck().toBuilder()
                    .setAppliedCursor(f.getAck().getAppliedCursor() + 1)).build());
        }
    });

    /** The window {@link #SOURCE_EXCEEDS_WINDOW} grants: less than any bootstrap's Begin, page and Commit. */
    static final long GRANTED_WINDOW_BYTES = 64;

    /** How far beyond the received frame {@link #REQUESTER_ACK_BEYOND_RECEIVED} ACKs. */
    static final long ACK_BEYOND = 1000;

    /** Which end of the Manager the mutant breaks. */
    enum Role {
        /** The Manager serving a session (the kit's source rows talk to it). */
        SOURCE,
        /** The Manager subscribing to the kit's source (the kit's requester rows talk to it). */
        REQUESTER
    }

    private final Role role;
    private final String breakage;
    private final Supplier<StreamRewrite> rewrite;

    Mutant(Role role, String breakage, Supplier<StreamRewrite> rewrite) {
        this.role = role;
        this.breakage = breakage;
        this.rewrite = rewrite;
    }

    Role role() {
        return role;
    }

    String breakage() {
        return breakage;
    }

    Supplier<StreamRewrite> rewrite() {
        return rewrite;
    }

    /** Holds each page or replay frame of a bootstrap one step, so the SnapshotCommit overtakes the last one. */
    private static final class CommitBeforeS1 extends StreamRewrite {
        private SourceFrame held;
        private boolean committed;

        @Override
        List<SourceFrame> sourceFrame(SourceFrame f) {
            if (committed) {
                return List.of(f);
            }
            if (f.hasSnapshotCommit()) {
                committed = true;
                return held == null ? List.of(f) : List.of(f, held);
            }
            List<SourceFrame> out = held == null ? List.of() : List.of(held);
            held = null;
            if (f.hasSnapshotPage() || f.hasDelta()) {
                held = f;
                return out;
            }
            return out.isEmpty() ? List.of(f) : List.of(out.getFirst(), f);
        }
    }
}
