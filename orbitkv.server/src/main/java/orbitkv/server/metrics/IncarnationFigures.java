package orbitkv.server.metrics;

import java.util.Optional;
import orbitkv.index.IndexStatus;
import orbitkv.index.LockHoldSnapshot;
import orbitkv.inventory.JournalStatus;
import orbitkv.inventory.SecondsHistogram;
import orbitkv.membership.LeaseStatus;
import orbitkv.membership.MemberRecordRefusals;
import orbitkv.server.incarnation.ClusterMetadata;

/**
 * The current incarnation at one scrape (issue 34 item 2): what {@link IncarnationMetricFamilies} reads, taken once
 * from whichever incarnation is current, so a heal between two families of one scrape cannot mix incarnations.
 *
 * @param intentionalWait the source's intentional coalescing wait
 * @param sessions both session ends, when the incarnation runs sessions
 * @param transfer both transfer ends, when the incarnation runs transfer
 * @param journal the source journal
 * @param applyLockHold the index apply lock's hold times (IDX-1)
 * @param lookupLockHold the index lookup lock's hold times (IDX-1)
 * @param index the index's budget and owners
 * @param sessionLimitRefusedMembers current members this source refuses with SESSION_LIMIT (BND-3)
 * @param sessionLimitEpisodes SESSION_LIMIT episodes of current members
 * @param members admitted members in the current view
 * @param lease lease renewals
 * @param refusedRecords member records never admitted
 * @param awaitWaiting await requests waiting
 * @param awaitRefusedTooMany await requests refused by the waiter bound
 * @param awaitTimedOut await requests timed out
 */
public record IncarnationFigures(SecondsHistogram intentionalWait, Optional<SessionMetricFamilies.Ends> sessions,
                                 Optional<TransferMetricFamilies.Ends> transfer, JournalStatus journal,
                                 LockHoldSnapshot applyLockHold, LockHoldSnapshot lookupLockHold, IndexStatus index,
                                 int sessionLimitRefusedMembers, long sessionLimitEpisodes, int members,
                                 LeaseStatus lease, MemberRecordRefusals refusedRecords, int awaitWaiting,
                                 long awaitRefusedTooMany, long awaitTimedOut) {
    /** Reads {@code m} once. */
    public static IncarnationFigures of(ClusterMetadata m) {
        Optional<SessionMetricFamilies.Ends> sessions = m.sessions()
                .map(s -> new SessionMetricFamilies.Ends(s.server().metrics(), s.subscriber().metrics()));
        Optional<TransferMetricFamilies.Ends> transfer = m.transfer()
                .map(t -> new TransferMetricFamilies.Ends(t.sourceStatus(), t.engineStatus()));
        long episodes = m.sessions().map(s -> s.server().sessionLimitRefusals().episodes()).orElse(0L);
        return new IncarnationFigures(m.source().intentionalWaitSeconds(), sessions, transfer, m.source().status(),
                m.index().applyLockHold(), m.index().lookupLockHold(), m.index().status(),
                m.sourceSessionsRefusedMembers().size(), episodes, m.membership().view().members().size(),
                m.membership().leaseStatus(), m.membership().refusedRecords(), m.signals().waiting(),
                m.signals().refusedTooMany(), m.signals().timedOut());
    }
}
