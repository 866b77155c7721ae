package orbitkv.conformance.kit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import orbitkv.membership.MemberRole;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Tag("unit")
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class KitMembersTest {
    @Test
    @DisplayName("MEM-11 the kit's requesters (req-N) register requester-only, so the target never waits for them; its source (src) serves")
    void rolesOfKitMembers() {
        assertThat(KitMembers.memberRole("req-1")).isEqualTo(MemberRole.REQUESTER);
        assertThat(KitMembers.memberRole("req-64")).isEqualTo(MemberRole.REQUESTER);
        assertThat(KitMembers.memberRole("src")).isEqualTo(MemberRole.SERVING);
    }
}
