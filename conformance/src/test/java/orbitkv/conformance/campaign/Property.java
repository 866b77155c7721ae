package orbitkv.conformance.campaign;

/**
 * The properties the campaign checks after (and, sampled, during) every schedule (issue 17 item 2), each
 * against the test's own {@link SourceModel}, never against etcd block keys or the implementation's state.
 */
enum Property {
    /** A source's answers give each change a sequence above every earlier one of its lineage; a requester's watermark of an installed view never goes back (DELTA-7..9, INV-4). */
    ORDERED,
    /** No key lists one owner and medium twice; no two keys of a source share a sequence of one lineage (INV-3). */
    UNIQUE,
    /** A requester's rows of a source are exactly the source's state at one sequence between two of its watermark readings: frames apply whole (DELTA-2, INV-5). */
    ATOMIC,
    /** Acknowledged saves stay resident at the source, and after heal every admitted peer lists exactly them once it awaited the source's fence (API-4, INV-1). */
    RELIABLE,
    /** After a disconnect whose gap the journal still retains, the requester continues its installed view instead of bootstrapping again (DELTA-10, SNAP-8). */
    RESUMABLE,
    /** A resumed view continues from its bookmark: same view id, watermark not below the one before the fault (SNAP-8, SNAP-10). */
    BOOKMARKABLE,
    /** A source's outstanding frame bytes never exceed the receive window and return to 0 when idle (SES-13, SES-14). */
    CREDIT,
    /** No requester lists an incarnation it no longer admits, and after heal none lists any but the current ones (INV-7, IDX-13, INV-10). */
    STALE_INCARNATION,
    /** Restored bytes equal the payload the model saved (local restores; peer restores once transfer is wired). */
    BYTES,
    /** No Manager logs an ERROR line outside the justified allowlist. */
    LOG_ERRORS,
    /** The cluster converges (membership settled, views installed, awaits answered) within the stated bound. */
    CONVERGENCE,
    /** A live Manager (process running, not stopped, not restarted) answers the sampled status and query without a 5xx (issue 34 item 7). */
    ANSWERS,
    /** Every schedule judged at least the configured minimum of samples: a sampler that could not read proves nothing (issue 34 item 7). */
    SAMPLED;

    String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
