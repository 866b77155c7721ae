package orbitkv.server.http;

import orbitkv.server.config.ManagerConfig;
import orbitkv.server.config.RawValues;
import orbitkv.server.config.Setting;

/** HTTP limits for tests: the configuration's defaults, with single bounds changed by the caller. */
final class TestLimits {
    private TestLimits() {}

    static HttpLimits defaults() {
        return HttpLimits.of(ManagerConfig.from(new RawValues().put(Setting.STANDALONE, "true")));
    }

    /** The bounds HttpApiTest's table was written for: 64 KiB bodies, 4 KiB blocks, 8 request slots. */
    static HttpLimits small() {
        return defaults().withBodies(64 * 1024, 64 * 1024, 4096).withSlots(8, 4);
    }
}
