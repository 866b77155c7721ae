package orbitkv.index;

import java.util.List;
import java.util.Optional;

/**
 * One page of per-owner diagnostics ordered by owner (node id, epoch, id) (IDX-8).
 *
 * @param owners at most the requested page size
 * @param nextPageToken opaque token for the next page; empty on the last page
 */
public record StatusPage(List<OwnerViewStatus> owners, Optional<String> nextPageToken) {
    public StatusPage {
        owners = List.copyOf(owners);
    }
}
