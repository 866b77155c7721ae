package orbitkv.transfer.requester;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import orbitkv.transfer.Grant;
import orbitkv.transfer.frame.DataFrames;

/** Test access to a grant's secret, for raw-socket data channel tests that BIND like the engine does. */
public final class GrantSecrets {
    private GrantSecrets() {}

    /** A copy of the secret the source returned with {@code grant} (a grant this engine issued). */
    public static byte[] secret(Grant grant) {
        return ((IssuedGrant) grant).secret.clone();
    }

    /** The AuthorizeRequest the engine would send for {@code request}, encoded (another host's boot id: no arena). */
    public static byte[] authorizeRequest(orbitkv.transfer.GrantRequest request, orbitkv.membership.Incarnation self,
            orbitkv.membership.ClusterIdentity cluster) {
        return AuthorizeCalls.request(request, self, cluster, java.util.UUID.randomUUID()).toByteArray();
    }

    /** The 40-byte BIND frame of {@code grant} with its secret. */
    public static ByteBuffer bindFrame(Grant grant) {
        ByteBuf b = Unpooled.buffer(DataFrames.REQUEST_BYTES);
        DataFrames.writeBind(b, grant.id(), secret(grant));
        return b.nioBuffer();
    }
}
