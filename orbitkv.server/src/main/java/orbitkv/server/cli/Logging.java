package orbitkv.server.cli;

import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * One logging facade (SLF4J) with one backend in the image; grpc's java.util.logging is bridged to it
 * (DESIGN §7 Logging).
 */
final class Logging {
    private Logging() {}

    static void install() {
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
    }
}
