package orbitkv.conformance.campaign;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The campaign's independent record of one source node (issue 17 item 2): what the test itself saved and
 * evicted there, with which payload, and at which residency sequence the node's answers put each change. It
 * never reads etcd block keys and never takes the implementation's state as truth; the node's own answers
 * only resolve operations whose outcome the test could not know (an indeterminate request: the connection
 * failed after sending), and then only among the outcomes that request could have had.
 *
 * <p>Content: per key, the set of possible payload generations ({@link #ABSENT} for "not resident"); one
 * element once known. Lineage: the residency sequences of the current incarnation are known from
 * {@link #base} on (after a restart from 0; after a heal or an indeterminate request, from the next
 * convergence point), so the model can say what the node held at any sequence after the base
 * ({@link #stateAt}): the oracle of the consistent-cut (atomic, ordered) checks.
 *
 * <p>A save's answer does not name the incarnation whose journal numbered it, and a heal switches the
 * lineage without a restart. So ordering and cut anomalies are first recorded as <em>suspicions</em> of the
 * current lineage; when the lineage ends (a restart, or the next convergence point) they become violations
 * only if the node still had the lineage's incarnation at that moment, i.e. no heal happened meanwhile.
 */
final class SourceModel {
    /** The generation standing for "not resident". */
    static final long ABSENT = 0;

    /** One residency change at a known sequence. */
    record Change(long sequence, String key, long generation) {}

    /** A resident key: its payload generation and the sequence of the put that made it resident. */
    record Put(long generation, long sequence) {}

    /** An anomaly of the current lineage, confirmed or dropped when the lineage ends. */
    record Suspicion(Property property, String message) {}

    final String node;
    private String lineageIncarnation;
    private final List<Suspicion> suspicions = new ArrayList<>();
    private long dropped;
    private final Map<String, Set<Long>> content = new TreeMap<>();
    private boolean lineageKnown = true;
    private long base;
    private Map<String, Put> atBase = new TreeMap<>();
    private final List<Change> log = new ArrayList<>();
    private long head;

    SourceModel(String node) {
        this.node = node;
    }

    /**
     * The node's process is being replaced: {@code incarnationAtEnd} is the incarnation the old process last
     * reported (null if unknown); the new process's cache and journal start empty (OPS-4, INV-7). Returns the
     * confirmed suspicions of the ended lineage.
     */
    synchronized List<Suspicion> restarted(String incarnationAtEnd) {
        List<Suspicion> confirmed = closeLineage(incarnationAtEnd);
        content.clear();
        lineageKnown = true;
        base = 0;
        head = 0;
        atBase = new TreeMap<>();
        log.clear();
        lineageIncarnation = null; // set by started()
        return confirmed;
    }

    /** The new process registered as {@code incarnation}: the lineage that {@link #restarted} opened is its. */
    synchronized void started(String incarnation) {
        lineageIncarnation = incarnation;
    }

    private List<Suspicion> closeLineage(String incarnationAtEnd) {
        List<Suspicion> confirmed = new ArrayList<>();
        if (lineageIncarnation != null && lineageIncarnation.equals(incarnationAtEnd)) {
            confirmed.addAll(suspicions);
        } else {
            dropped += suspicions.size();
        }
        suspicions.clear();
        return confirmed;
    }

    /** Records an anomaly of the current lineage (ignored while the lineage is unknown). */
    synchronized void suspect(Property p, String message) {
        if (lineageKnown) {
            suspicions.add(new Suspicion(p, message + " [lineage " + lineageIncarnation + "]"));
        }
    }

    /** Suspicions dropped because a heal ended their lineage first. */
    synchronized long droppedSuspicions() {
        return dropped;
    }

    /** The incarnation whose sequences the model follows (null while unknown). */
    synchronized String lineageIncarnation() {
        return lineageKnown ? lineageIncarnation : null;
    }

    /** The node healed into a new incarnation: same content, a new lineage known only from the next convergence. */
    synchronized void healed() {
        lineageKnown = false;
    }

    /**
     * An acknowledged save: {@code sequences} key → the sequence the answer gave. A sequence not above every
     * earlier one of this lineage is an ORDERED suspicion.
     */
    synchronized void saved(Map<String, Long> generations, Map<String, Long> sequences) {
        for (Map.Entry<String, Long> e : sequences.entrySet()) {
            long seq = e.getValue();
            if (lineageKnown) {
                if (seq <= head) {
                    suspect(Property.ORDERED, node + ": save of " + e.getKey() + " got sequence " + seq + " not above " + head);
                }
                log.add(new Change(seq, e.getKey(), generations.get(e.getKey())));
            }
            head = Math.max(head, seq);
            content.put(e.getKey(), new HashSet<>(Set.of(generations.get(e.getKey()))));
        }
    }

    /** An acknowledged single-key evict that removed {@code evicted} residences, the answer's head sequence. */
    synchronized List<String> evicted(String key, long evicted, long headSequence) {
        List<String> bad = new ArrayList<>();
        Set<Long> before = content.getOrDefault(key, Set.of(ABSENT));
        if (evicted == 0 && before.size() == 1 && !before.contains(ABSENT)) {
            bad.add(node + ": evict of " + key + " removed nothing, but the model holds generation " + before);
        }
        if (evicted > 0 && before.equals(Set.of(ABSENT))) {
            bad.add(node + ": evict of " + key + " removed " + evicted + " residences the model never saved");
        }
        if (evicted == 1 && lineageKnown) {
            if (headSequence <= head) {
                suspect(Property.ORDERED, node + ": evict of " + key + " at head " + headSequence + " not above " + head);
            }
            log.add(new Change(headSequence, key, ABSENT));
            head = headSequence;
        } else if (evicted > 1) {
            lineageKnown = false; // several media: the per-medium sequences are not in the answer
        }
        content.put(key, new HashSet<>(Set.of(ABSENT)));
        return bad;
    }

    /** A save or evict whose outcome is unknown: each key may hold its old or its new state. */
    synchronized void indeterminate(Map<String, Long> outcomes) {
        lineageKnown = false;
        for (Map.Entry<String, Long> e : outcomes.entrySet()) {
            content.computeIfAbsent(e.getKey(), k -> new HashSet<>(Set.of(ABSENT))).add(e.getValue());
        }
    }

    /** Possible generations of every key the model has seen. */
    synchronized Map<String, Set<Long>> content() {
        Map<String, Set<Long>> out = new LinkedHashMap<>();
        content.forEach((k, v) -> out.put(k, Set.copyOf(v)));
        return out;
    }

    /** Keys whose only possible state is resident. */
    synchronized Map<String, Long> knownResident() {
        Map<String, Long> out = new TreeMap<>();
        content.forEach((k, v) -> {
            if (v.size() == 1 && !v.contains(ABSENT)) {
                out.put(k, v.iterator().next());
            }
        });
        return out;
    }

    /**
     * At a convergence point: {@code observed} is what the node holds now (key → generation read back from
     * restored bytes, absent keys omitted) at the residency sequences {@code sequences} (key → the node's own
     * answer), {@code headSequence} its journal head. Every key must be in one of its possible states; then
     * the model takes the observed state as known and the lineage as known from {@code headSequence}.
     * Returns violations (RELIABLE); {@code confirmed} receives the ended lineage's confirmed suspicions.
     */
    synchronized List<String> settle(Map<String, Long> observed, Map<String, Long> sequences, long headSequence,
                                     String incarnationNow, List<Suspicion> confirmed) {
        confirmed.addAll(closeLineage(incarnationNow));
        lineageIncarnation = incarnationNow;
        List<String> bad = new ArrayList<>();
        Set<String> keys = new HashSet<>(content.keySet());
        keys.addAll(observed.keySet());
        for (String k : keys) {
            long actual = observed.getOrDefault(k, ABSENT);
            Set<Long> possible = content.getOrDefault(k, Set.of(ABSENT));
            if (!possible.contains(actual)) {
                bad.add(node + ": key " + k + " holds " + (actual == ABSENT ? "nothing" : "generation " + actual)
                        + " but the acknowledged operations allow only " + possible);
            }
            content.put(k, new HashSet<>(Set.of(actual)));
        }
        lineageKnown = true;
        base = headSequence;
        head = headSequence;
        atBase = new TreeMap<>();
        observed.forEach((k, g) -> atBase.put(k, new Put(g, sequences.getOrDefault(k, -1L))));
        log.clear();
        return bad;
    }

    /** What the node held at {@code sequence} of the current lineage (key → put, absent omitted), or null if unknown. */
    synchronized Map<String, Put> stateAt(long sequence) {
        if (!lineageKnown || sequence < base) {
            return null;
        }
        Map<String, Put> s = new TreeMap<>(atBase);
        List<Change> ordered = new ArrayList<>(log);
        ordered.sort(java.util.Comparator.comparingLong(Change::sequence));
        for (Change c : ordered) {
            if (c.sequence() > sequence) {
                break;
            }
            if (c.generation() == ABSENT) {
                s.remove(c.key());
            } else {
                s.put(c.key(), new Put(c.generation(), c.sequence()));
            }
        }
        return s;
    }

    /** The sequences of the current lineage at which the known state changed (base first). */
    synchronized List<Long> changePoints() {
        List<Long> out = new ArrayList<>();
        out.add(base);
        log.forEach(c -> out.add(c.sequence()));
        return out;
    }

    /** The last sequence of the current lineage this model has recorded (acknowledged saves and evicts, or a settle). */
    synchronized long recordedThrough() {
        return head;
    }

    synchronized boolean lineageKnown() {
        return lineageKnown;
    }
}
