package orbitkv.conformance.mutant;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import orbitkv.conformance.kit.InProcessTable;
import orbitkv.membership.Endpoint;
import orbitkv.membership.Incarnation;
import orbitkv.membership.Member;
import orbitkv.membership.MembershipView;
import orbitkv.membership.NodeId;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 34 item 6: the in-process adversarial table ({@link InProcessTable}: the kit's scenario classes against an
 * in-process target) catches broken in-process targets. Each {@link Breakage} breaks one piece between the kit and
 * the in-process target: a {@link WireRewriteProxy} running one of {@link MutantKitTest}'s {@link Mutant}s in front
 * of the target's peer listener or of the kit's listener, or a membership view under the session server that
 * admits any incarnation (stale and unlisted ones). The rows of the broken side run, and exactly the rows of {@link Breakage#expected}
 * must fail; the rows are those the black-box {@link MutantKitTest} pins for the same mutant, plus the rows it
 * cannot run against a Manager it does not own (session_limit without a known limit, suspended_membership,
 * fenced_source), which the in-process target runs.
 */
@Tag("gate")
class InProcessMutantTableTest {
    /** Each row's deadline: a row that never sees its outcome ends within it. */
    static final Duration ROW_DEADLINE = Duration.ofSeconds(15);

    /** One broken piece, the side whose rows run and the rows that must fail. */
    enum Breakage {
        /** SES-4..SES-10 via the wire: every Error answering an Open (frame 1) is dropped, the stream still ends. */
        SOURCE_NO_ERROR_ON_BAD_OPEN(Mutant.SOURCE_NO_ERROR_ON_BAD_OPEN, "source", union(MutantKitTest.Rows.BAD_OPEN,
                Set.of("source/suspended_membership", "source/fenced_source", "source/session_limit"))),
        /** SES-13 via the wire: the target's requester ACKs 1000 frames beyond what it received. */
        REQUESTER_ACK_BEYOND_RECEIVED(Mutant.REQUESTER_ACK_BEYOND_RECEIVED, "requester", MutantKitTest.Rows.REQUESTER_ACK_READERS),
        /** SES-4..SES-9 via the wire: the target's requester closes a bad session without its Error frame. */
        REQUESTER_NO_ERROR(Mutant.REQUESTER_NO_ERROR, "requester", union(MutantKitTest.Rows.REQUESTER_ERROR,
                Set.of("requester/requester_fenced"))),
        /**
         * SES-5 in the target: its session server's view admits every incarnation while valid, unlisted and stale ones
         * alike. The table's admission row is unknown_requester (no row opens under a stale requester epoch).
         */
        SOURCE_ADMITS_ANY_INCARNATION(null, "source", Set.of("source/unknown_requester"));

        final Mutant mutant;
        final String side;
        final Set<String> expected;

        Breakage(Mutant mutant, String side, Set<String> expected) {
            this.mutant = mutant;
            this.side = side;
            this.expected = expected;
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Breakage.class)
    @Timeout(600)
    @DisplayName("SES-4 SES-5 SES-9 SES-12 SES-13 INV-7 MEM-9: the in-process table against a broken in-process target fails exactly the "
            + "expected rows")
    void tableCatchesBrokenTarget(Breakage breakage) throws Exception {
        Set<String> failed = new TreeSet<>();
        for (InProcessTable.Row row : InProcessTable.rows()) {
            if (!row.side().equals(breakage.side)) {
                continue;
            }
            Broken wiring = new Broken(breakage);
            try {
                InProcessTable.Result r = InProcessTable.run(row, wiring);
                System.out.printf("%s %s: %s%n", breakage, row.id(), r);
                if (!r.passed()) {
                    failed.add(row.id());
                }
            } finally {
                wiring.closeProxies();
            }
        }
        assertThat(failed).as("rows failed against %s", breakage).containsExactlyInAnyOrderElementsOf(breakage.expected);
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        return Stream.concat(a.stream(), b.stream()).collect(Collectors.toUnmodifiableSet());
    }

    /** One row's broken wiring; closes the proxies it started. */
    private static final class Broken implements InProcessTable.Wiring {
        private final Breakage breakage;
        private final List<WireRewriteProxy> proxies = new ArrayList<>();

        Broken(Breakage breakage) {
            this.breakage = breakage;
        }

        @Override
        public Endpoint beforeTarget(Endpoint targetPeer) throws IOException {
            return breakage.mutant != null && breakage.mutant.role() == Mutant.Role.SOURCE ? proxy(targetPeer) : targetPeer;
        }

        @Override
        public Endpoint beforeKit(Endpoint kitListener) throws IOException {
            return breakage.mutant != null && breakage.mutant.role() == Mutant.Role.REQUESTER ? proxy(kitListener) : kitListener;
        }

        private Endpoint proxy(Endpoint upstream) throws IOException {
            WireRewriteProxy p = WireRewriteProxy.start(upstream);
            proxies.add(p);
            p.rewriteWith(breakage.mutant.rewrite());
            return p.endpoint();
        }

        @Override
        public MembershipView serverView(MembershipView view) {
            return breakage == Breakage.SOURCE_ADMITS_ANY_INCARNATION ? new AdmitsAnyIncarnation(view) : view;
        }

        @Override
        public Duration rowDeadline() {
            return ROW_DEADLINE;
        }

        void closeProxies() throws InterruptedException {
            for (WireRewriteProxy p : proxies) {
                p.close();
            }
        }
    }

    /** A view that admits every incarnation while valid: stale epochs and nodes it does not list (SES-5 broken). */
    private record AdmitsAnyIncarnation(MembershipView view) implements MembershipView {
        @Override
        public boolean isAdmitted(Incarnation incarnation) {
            return view.valid();
        }

        @Override
        public Collection<Member> members() {
            return view.members();
        }

        @Override
        public Optional<Member> member(NodeId nodeId) {
            return view.member(nodeId);
        }

        @Override
        public boolean valid() {
            return view.valid();
        }

        @Override
        public long revision() {
            return view.revision();
        }

        @Override
        public orbitkv.membership.ClusterIdentity cluster() {
            return view.cluster();
        }
    }
}
