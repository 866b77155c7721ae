package orbitkv.server.config;

/** A refused configuration: the message names the option(s) and the bound or relation broken (BND-6). */
public final class ConfigException extends IllegalArgumentException {
    public ConfigException(String message) {
        super(message);
    }
}
