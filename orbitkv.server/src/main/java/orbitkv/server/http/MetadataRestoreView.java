package orbitkv.server.http;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import orbitkv.inventory.Namespace;
import orbitkv.inventory.StateKey;
import orbitkv.server.incarnation.DistributedMetadata;
import orbitkv.server.restore.IndexEvidence;
import orbitkv.server.restore.RestoreTransfer;
import orbitkv.server.restore.RestoreView;

/**
 * The restore package's view of this Manager's distributed metadata (the seam of issue 34 item 1): the index's
 * evidence from the metadata's lookup, the transfer ends from its incarnation. Whoever owns the incarnation context
 * can implement {@link RestoreView} directly instead.
 */
record MetadataRestoreView(DistributedMetadata metadata) implements RestoreView {
    MetadataRestoreView {
        Objects.requireNonNull(metadata, "metadata");
    }

    @Override
    public IndexEvidence evidence(Namespace namespace, List<StateKey> keys) {
        return evidence(metadata.lookup(namespace, keys));
    }

    @Override
    public Optional<RestoreTransfer> transfer() {
        return metadata.transfer().map(RestoreTransfer::of);
    }

    /** A lookup's evidence in the restore's terms (the HTTP replica views stay here). */
    static IndexEvidence evidence(DistributedMetadata.Lookup lookup) {
        return new IndexEvidence(orbitkv.index.Coverage.valueOf(lookup.coverage().name()), lookup.viewGeneration(),
                lookup.replicas(), lookup.truncated());
    }
}
