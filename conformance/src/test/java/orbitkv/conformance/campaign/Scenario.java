package orbitkv.conformance.campaign;

import java.time.Duration;
import orbitkv.conformance.peer.LinkFaults;
import orbitkv.testing.Await;

/**
 * The fault scenarios of the campaign (issue 17 item 2). Each applies its faults to a running cluster under
 * load and heals them; the schedule's seed draws the nodes, durations and probabilities. {@link #resumes}
 * says whether requesters are expected to continue their installed views afterwards (RESUMABLE,
 * BOOKMARKABLE) when neither incarnation changed and the journal still retains the gap.
 */
enum Scenario {
    /** Duplicated, reordered, detectably corrupted and oversized gRPC messages on every peer link. */
    FRAME_FAULTS(true) {
        @Override
        void run(Schedule s) {
            LinkFaults.FrameFaults f = new LinkFaults.FrameFaults(p(s, 0.02, 0.2), p(s, 0.02, 0.2), p(s, 0.01, 0.1),
                    p(s, 0.005, 0.05), 64 << 20, true, true);
            s.cluster.allPeerLinks(LinkFaults.NONE.withFrames(f));
            s.count("frame-faults");
            s.hold(s.between(3000, 6000));
            s.cluster.healLinks();
        }
    },
    /** Both directions between two Managers partitioned (lossless), then healed. */
    PEER_PARTITION(true) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node a = s.anyNode();
            CampaignCluster.Node b = s.otherThan(a);
            s.cluster.peerLink(a.name, b.name, LinkFaults.PARTITION);
            s.cluster.peerLink(b.name, a.name, LinkFaults.PARTITION);
            s.count("partition-peer");
            s.hold(s.between(1000, 5000));
            s.cluster.healLinks();
        }
    },
    /** One requester stalls on one source: its session neither reads frames nor returns ACKs, the window fills. */
    STALLED_SUBSCRIBER(true) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node r = s.anyNode();
            CampaignCluster.Node src = s.otherThan(r);
            s.cluster.peerLink(r.name, src.name, LinkFaults.PARTITION);
            s.count("stalled-subscriber");
            s.hold(s.between(2000, 5000));
            s.cluster.healLinks();
        }
    },
    /**
     * A stalled requester while its source churns past the journal's retention: the requester's cursor is
     * trimmed and it must bootstrap the source again (SNAP-4, BND-5).
     */
    RETENTION_OVERRUN(false) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node r = s.anyNode();
            CampaignCluster.Node src = s.otherThan(r);
            s.cluster.peerLink(r.name, src.name, LinkFaults.PARTITION);
            long from = s.head(src);
            s.workload.burst(true);
            s.count("journal-retention-overrun");
            try {
                Await.until(src.name + " churns past " + CampaignCluster.JOURNAL_RECORDS + " records", Duration.ofSeconds(60),
                        () -> s.head(src) - from > CampaignCluster.JOURNAL_RECORDS + 50L);
            } finally {
                s.workload.burst(false);
                s.cluster.healLinks();
            }
        }
    },
    /** Delay, jitter, segment loss and a bandwidth cap on peer links, delay on etcd links. */
    DELAY(true) {
        @Override
        void run(Schedule s) {
            s.cluster.allPeerLinks(LinkFaults.NONE.withDelay(s.between(20, 250), s.between(0, 100)).withLoss(p(s, 0, 0.05))
                    .withBandwidth(s.between(64, 512) << 10));
            for (CampaignCluster.Node n : s.cluster.nodes.values()) {
                s.cluster.etcdLinks(n.name, LinkFaults.NONE.withDelay(s.between(5, 100), s.between(0, 50)));
            }
            s.count("delay");
            s.count("bandwidth-cap");
            s.hold(s.between(3000, 6000));
            s.cluster.healLinks();
        }
    },
    /** Peer connections reset and dropped at random. */
    CONNECTION_RESETS(true) {
        @Override
        void run(Schedule s) {
            s.cluster.allPeerLinks(LinkFaults.NONE.withReset(p(s, 0.005, 0.05)));
            s.count("connection-resets");
            s.hold(s.between(3000, 5000));
            s.cluster.healLinks();
        }
    },
    /** One Manager cut from etcd shorter than its fence: degraded, still admitted. */
    ETCD_PARTITION_SHORT(true) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node n = s.anyNode();
            s.cluster.etcdLinks(n.name, LinkFaults.PARTITION);
            s.count("partition-etcd");
            s.hold(s.between(1000, 2500));
            s.cluster.healLinks();
        }
    },
    /** One Manager cut from etcd beyond its fence: fenced, local service meanwhile, heals as the next epoch. */
    ETCD_PARTITION_FENCE(false) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node n = s.anyNode();
            s.models.get(n.name).healed();
            s.cluster.etcdLinks(n.name, s.random.nextBoolean() ? LinkFaults.PARTITION : LinkFaults.BLACKHOLE);
            s.count("partition-etcd");
            s.hold(CampaignCluster.FENCE_AFTER.toMillis() + s.between(1000, 3000));
            s.cluster.healLinks();
        }
    },
    /** SIGSTOP beyond the lease, then SIGCONT: the process fences itself when it runs again and heals. */
    SIGSTOP_BEYOND_LEASE(false) {
        @Override
        void run(Schedule s) throws Exception {
            s.pause(s.anyNode(), CampaignCluster.LEASE_TTL.toMillis() + s.between(500, 2500));
        }
    },
    /** The Manager's lease revoked with etcdctl: its record goes, it fences (LEASE_LOST) and heals. */
    LEASE_REVOKE(false) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node n = s.anyNode();
            String lease = s.cluster.leaseOf(n.name);
            if (lease == null) {
                s.note(n.name + " had no member record to revoke");
                return;
            }
            s.models.get(n.name).healed();
            s.cluster.hosts.etcdctl("lease", "revoke", lease);
            s.count("lease-revoke");
            s.hold(s.between(1000, 3000));
        }
    },
    /** One etcd member killed (sometimes the leader), restarted later. */
    ETCD_MEMBER_LOSS(false) {
        @Override
        void run(Schedule s) {
            int m = s.random.nextInt(3);
            s.cluster.hosts.members().kill(m);
            s.count("etcd-member-loss");
            s.hold(s.between(2000, 6000));
            s.cluster.hosts.members().restart(m);
        }
    },
    /** Two of three etcd members killed beyond the fence: every Manager fences, keeps its local service, heals. */
    QUORUM_LOSS(false) {
        @Override
        void run(Schedule s) {
            int keep = s.random.nextInt(3);
            s.models.values().forEach(SourceModel::healed);
            for (int m = 0; m < 3; m++) {
                if (m != keep) {
                    s.cluster.hosts.members().kill(m);
                }
            }
            s.count("etcd-quorum-loss");
            s.hold(CampaignCluster.FENCE_AFTER.toMillis() + s.between(1000, 3000));
            for (int m = 0; m < 3; m++) {
                if (m != keep) {
                    s.cluster.hosts.members().restart(m);
                }
            }
        }
    },
    /**
     * One host cut off from every other (network namespaces: its link down; loopback: all its proxied links),
     * shorter or longer than the fence, then reconnected.
     */
    HOST_PARTITION(false) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node n = s.anyNode();
            long ms = s.random.nextBoolean() ? s.between(1000, 3000) : CampaignCluster.FENCE_AFTER.toMillis() + s.between(1000, 3000);
            if (ms > CampaignCluster.FENCE_AFTER.toMillis()) {
                s.models.get(n.name).healed();
            }
            s.cluster.isolate(n, true);
            s.count("host-partition");
            try {
                s.hold(ms);
            } finally {
                s.cluster.isolate(n, false);
            }
        }
    },
    /** Latency on one link: one directed peer link and one Manager's link to one etcd member. */
    LINK_LATENCY(true) {
        @Override
        void run(Schedule s) {
            CampaignCluster.Node a = s.anyNode();
            CampaignCluster.Node b = s.otherThan(a);
            LinkFaults slow = LinkFaults.NONE.withDelay(s.between(100, 400), s.between(0, 100));
            s.cluster.peerLink(a.name, b.name, slow);
            a.etcdLinks.get(s.random.nextInt(a.etcdLinks.size())).faults(LinkFaults.NONE.withDelay(s.between(50, 200), 20));
            s.count("link-latency");
            s.hold(s.between(3000, 5000));
            s.cluster.healLinks();
        }
    },
    /** kill -9 of a Manager under load, restarted as a new incarnation. */
    KILL9(false) {
        @Override
        void run(Schedule s) throws Exception {
            CampaignCluster.Node n = s.anyNode();
            s.hold(s.between(0, 2000));
            s.kill9(n);
            s.hold(s.between(0, 3000));
            s.restart(n, "");
        }
    },
    /** A source halts right after sending a snapshot page to a requester that is bootstrapping it. */
    KILL9_SOURCE_MID_SNAPSHOT(false) {
        @Override
        void run(Schedule s) throws Exception {
            CampaignCluster.Node src = s.anyNode();
            CampaignCluster.Node r = s.otherThan(src);
            s.restart(src, "snapshot-page-sent@1"); // empty now: its first pages go to the next bootstrap
            s.hold(3000); // it fills up under the load
            s.restart(r, "");
            s.awaitCrash(src, "snapshot-page-sent", Duration.ofSeconds(30));
            s.restart(src, "");
        }
    },
    /** A requester halts right after staging a snapshot page of a source it bootstraps. */
    KILL9_REQUESTER_MID_SNAPSHOT(false) {
        @Override
        void run(Schedule s) throws Exception {
            CampaignCluster.Node r = s.anyNode();
            s.restart(r, "snapshot-page-staged@" + s.between(1, 3));
            s.awaitCrash(r, "snapshot-page-staged", Duration.ofSeconds(30));
            s.restart(r, "");
        }
    },
    /** A source halts right after sending a delta. */
    KILL9_SOURCE_MID_DELTA(false) {
        @Override
        void run(Schedule s) throws Exception {
            CampaignCluster.Node src = s.anyNode();
            s.restart(src, "delta-sent@" + s.between(3, 20));
            s.awaitCrash(src, "delta-sent", Duration.ofSeconds(30));
            s.restart(src, "");
        }
    },
    /** A requester halts right after applying a delta. */
    KILL9_REQUESTER_MID_DELTA(false) {
        @Override
        void run(Schedule s) throws Exception {
            CampaignCluster.Node r = s.anyNode();
            s.restart(r, "delta-applied@" + s.between(5, 40));
            s.awaitCrash(r, "delta-applied", Duration.ofSeconds(30));
            s.restart(r, "");
        }
    };

    private final boolean resumes;

    Scenario(boolean resumes) {
        this.resumes = resumes;
    }

    /** Whether requesters should continue their installed views through this scenario. */
    boolean resumes() {
        return resumes;
    }

    abstract void run(Schedule s) throws Exception;

    private static double p(Schedule s, double min, double max) {
        return min + s.random.nextDouble() * (max - min);
    }
}
