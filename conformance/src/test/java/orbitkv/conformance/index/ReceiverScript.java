package orbitkv.conformance.index;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import orbitkv.index.GlobalIndex;
import orbitkv.index.IndexConfig;
import orbitkv.index.KeyCandidates;
import orbitkv.index.LookupOutcome;
import orbitkv.index.Replica;
import orbitkv.inventory.CommitMarker;
import orbitkv.inventory.CommitOutcome;
import orbitkv.inventory.DeltaOutcome;
import orbitkv.inventory.Interval;
import orbitkv.inventory.Medium;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.ResetCause;
import orbitkv.inventory.ResidenceRecord;
import orbitkv.inventory.Scope;
import orbitkv.inventory.StageOutcome;
import orbitkv.inventory.StateKey;
import orbitkv.inventory.TranscriptDigest;
import orbitkv.membership.Incarnation;

/**
 * Plays the source end of one InventorySession against a GlobalIndex through the exported
 * {@code ViewReceiver} SPI only, the way the table rows describe it. It keeps its own transcript digest
 * and frame numbering, as a real source would, so that a lost frame ({@code lose ...}) is missing at the
 * receiver but present in the commit marker.
 *
 * <p>Step language (one row's steps are separated by {@code ;}):
 * <pre>
 *   install W [rec..]        begin W; page rec..; commit W   (a committed view at W)
 *   begin S0 [digest=other]  snapshot begin with a fresh view id
 *   page [rec..]             next page ordinal;   page#N explicit ordinal
 *   delta F T [rec..]        delta (F, T] to the current view (staging if any, else installed)
 *   delta@unknown F T        delta naming a view the receiver never saw
 *   commit S1 [pages=N] [max=M] [last=N] [digest=bad]
 *   lose page|delta ...      the source sends it (numbering, transcript) but it never arrives
 *   disconnect | live H | clock +MS | remove | suspend
 * records: put:KEY:D|S:SEQ:SIZE  del:KEY:D|S:SEQ   KEY may be NS/KEY (default namespace "ns-a")
 * </pre>
 */
final class ReceiverScript {
    static final Namespace NS_A = Namespace.utf8("ns-a");
    static final Namespace NS_B = Namespace.utf8("ns-b");
    static final Scope SCOPE = Scope.of(List.of(NS_A, NS_B));
    static final Incarnation SELF = TestMembership.incarnation("self", 1, 1);
    static final Incarnation SOURCE = TestMembership.incarnation("src", 3, 7);

    final ManualClock clock = new ManualClock();
    final GlobalIndex index;
    private long frame;
    private long views;
    private UUID current;
    private boolean staging;
    private TranscriptDigest.Builder transcript;
    private long pagesSent;
    private long beginFrame;
    private long lastStagedFrame;
    private long maxScanned;
    private long revision = 1;

    ReceiverScript(IndexConfig config, Executor cleanup) {
        index = GlobalIndex.create(SELF, SCOPE, config, clock, cleanup);
        index.onMembership(TestMembership.of(revision, true, List.of(SELF, SOURCE)));
    }

    ReceiverScript() {
        this(IndexConfig.defaults(), Runnable::run);
    }

    /** Runs all steps; returns the rendered outcome of the last one ({@code -} for steps without one). */
    String run(String steps) {
        String last = "-";
        for (String step : steps.split(";")) {
            if (!step.isBlank()) {
                last = step(step.trim().split("\\s+"));
            }
        }
        return last;
    }

    private String step(String[] w) {
        boolean lose = w[0].equals("lose");
        String[] s = lose ? java.util.Arrays.copyOfRange(w, 1, w.length) : w;
        String verb = s[0];
        switch (verb) {
            case "install" -> {
                long at = Long.parseLong(s[1]);
                step(new String[] {"begin", s[1]});
                if (s.length > 2) {
                    String[] page = new String[s.length - 1];
                    page[0] = "page";
                    System.arraycopy(s, 2, page, 1, s.length - 2);
                    step(page);
                }
                return step(new String[] {"commit", Long.toString(at)});
            }
            case "begin" -> {
                long s0 = Long.parseLong(s[1]);
                current = new UUID(0xabcdL, ++views);
                staging = true;
                beginFrame = ++frame;
                lastStagedFrame = beginFrame;
                pagesSent = 0;
                maxScanned = 0;
                var digest = has(s, "digest=other") ? Scope.all().digest() : SCOPE.digest();
                transcript = TranscriptDigest.builder().begin(beginFrame, current, digest, s0);
                return render(index.beginStaging(SOURCE, current, digest, s0, beginFrame));
            }
            case "commit" -> {
                long s1 = Long.parseLong(s[1]);
                TranscriptDigest d = transcript.finish();
                if (has(s, "digest=bad")) {
                    byte[] b = d.bytes();
                    b[0] ^= 1;
                    d = new TranscriptDigest(b);
                }
                CommitMarker m = new CommitMarker(s1, opt(s, "pages=", pagesSent), beginFrame,
                        opt(s, "last=", lastStagedFrame), opt(s, "max=", maxScanned), d);
                ++frame;
                CommitOutcome out = index.commit(SOURCE, current, m);
                if (out instanceof CommitOutcome.Installed) {
                    staging = false;
                }
                return render(out);
            }
            case "disconnect" -> {
                index.discardStaging(SOURCE, ResetCause.DISCONNECT);
                staging = false;
                frame = 0; // a new session numbers frames from 1 again
                return "-";
            }
            case "live" -> {
                frame++;
                index.observeLiveness(SOURCE, Long.parseLong(s[1]));
                return "-";
            }
            case "clock" -> {
                clock.advanceMs(Long.parseLong(s[1].replace("+", "")));
                return "-";
            }
            case "remove" -> {
                index.onMembership(TestMembership.of(++revision, true, List.of(SELF)));
                return "-";
            }
            case "suspend" -> {
                index.onMembership(TestMembership.of(++revision, false, List.of()));
                return "-";
            }
            default -> {
                if (verb.startsWith("page")) {
                    long ordinal = verb.startsWith("page#") ? Long.parseLong(verb.substring(5)) : pagesSent + 1;
                    pagesSent = Math.max(pagesSent, ordinal);
                    List<ResidenceRecord> recs = records(s, 1);
                    long f = ++frame;
                    lastStagedFrame = f;
                    recs.forEach(r -> maxScanned = Math.max(maxScanned, r.sequence()));
                    transcript.page(f, ordinal, recs);
                    return lose ? "-" : render(index.stagePage(SOURCE, current, ordinal, f, recs));
                }
                if (verb.startsWith("delta")) {
                    UUID target = verb.equals("delta@unknown") ? new UUID(9, 9) : current;
                    Interval iv = Interval.of(Long.parseLong(s[1]), Long.parseLong(s[2]));
                    List<ResidenceRecord> recs = records(s, 3);
                    long f = ++frame;
                    if (staging) {
                        lastStagedFrame = f;
                        transcript.replay(f, iv, recs);
                    }
                    return lose ? "-" : render(index.applyDelta(SOURCE, target, f, iv, recs));
                }
                throw new IllegalArgumentException("unknown step verb '" + verb + "'");
            }
        }
    }

    private static boolean has(String[] s, String flag) {
        return Set.of(s).contains(flag);
    }

    private static long opt(String[] s, String prefix, long dflt) {
        for (String w : s) {
            if (w.startsWith(prefix)) {
                return Long.parseLong(w.substring(prefix.length()));
            }
        }
        return dflt;
    }

    static List<ResidenceRecord> records(String[] s, int from) {
        List<ResidenceRecord> out = new ArrayList<>();
        for (int i = from; i < s.length; i++) {
            if (s[i].contains("=")) {
                continue;
            }
            String[] p = s[i].split(":");
            StateKey key = key(p[1]);
            Medium m = p[2].equals("D") ? Medium.DRAM : Medium.SSD;
            long seq = Long.parseLong(p[3]);
            out.add(switch (p[0]) {
                case "put" -> ResidenceRecord.put(key, m, seq, Long.parseLong(p[4]));
                case "del" -> ResidenceRecord.delete(key, m, seq);
                default -> throw new IllegalArgumentException("record must be put:... or del:..., got " + s[i]);
            });
        }
        return out;
    }

    static StateKey key(String text) {
        int slash = text.indexOf('/');
        Namespace ns = slash < 0 ? NS_A : Namespace.utf8(text.substring(0, slash));
        String k = slash < 0 ? text : text.substring(slash + 1);
        return new StateKey(ns, k.getBytes(StandardCharsets.UTF_8));
    }

    /** {@code KEY:D@SEQ/SIZE[~]} per replica of the source, {@code KEY:-} when absent. */
    String rows(List<String> keys) {
        List<StateKey> ks = keys.stream().map(ReceiverScript::key).toList();
        LookupOutcome out = index.lookup(ks);
        if (!(out instanceof LookupOutcome.Candidates c)) {
            return "refused";
        }
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < ks.size(); i++) {
            KeyCandidates kc = c.keys().get(i);
            StringBuilder b = new StringBuilder(keys.get(i)).append(':');
            if (kc.replicas().isEmpty()) {
                b.append('-');
            }
            boolean first = true;
            for (Replica r : kc.replicas()) {
                b.append(first ? "" : "+");
                first = false;
                b.append(r.medium() == Medium.DRAM ? 'D' : 'S').append('@').append(r.sequence()).append('/')
                        .append(r.sizeBytes()).append(r.stale() ? "~" : "");
            }
            parts.add(b.toString());
        }
        return String.join(" ", parts);
    }

    String coverage() {
        return switch (index.coverage()) {
            case CompleteAtWatermarks -> "Complete";
            case PartialHints -> "Partial";
            case Unavailable -> "Unavailable";
        };
    }

    String cursor() {
        return index.installedCursor(SOURCE).map(c -> Long.toString(c.watermark())).orElse("none");
    }

    Optional<UUID> currentView() {
        return Optional.ofNullable(current);
    }

    static String render(Object outcome) {
        return switch (outcome) {
            case DeltaOutcome.Applied a -> "Applied(" + a.watermark() + ")";
            case DeltaOutcome.Duplicate d -> "Duplicate(" + d.watermark() + ")";
            case DeltaOutcome.ResumeFrom r -> "ResumeFrom(" + r.appliedCursor() + ")";
            case DeltaOutcome.NeedRepair r -> "NeedRepair(" + r.appliedCursor() + ")";
            case DeltaOutcome.Rejected r -> "Rejected(" + r.reason() + ")";
            case StageOutcome.Staged st -> "Staged(" + st.stagedRows() + ")";
            case StageOutcome.Rejected r -> "Rejected(" + r.reason() + ")";
            case CommitOutcome.Installed in -> "Installed(" + in.watermark() + ")";
            case CommitOutcome.Rejected r -> "Rejected(" + r.reason() + ")";
            default -> throw new IllegalArgumentException("not an outcome: " + outcome);
        };
    }
}
