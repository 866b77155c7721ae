// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.prometheus.metrics.tracer.otel {
    requires transitive io.prometheus.metrics.tracer.common;

    exports io.prometheus.metrics.tracer.otel;

}
