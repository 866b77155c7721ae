// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.prometheus.metrics.core {
    requires io.prometheus.metrics.tracer.initializer;

    requires transitive io.prometheus.metrics.config;
    requires transitive io.prometheus.metrics.model;
    requires transitive io.prometheus.metrics.tracer.common;

    exports io.prometheus.metrics.core.datapoints;
    exports io.prometheus.metrics.core.exemplars;
    exports io.prometheus.metrics.core.metrics;
    exports io.prometheus.metrics.core.util;

}
