// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module io.prometheus.metrics.model {
    requires transitive io.prometheus.metrics.config;

    exports io.prometheus.metrics.model.registry;
    exports io.prometheus.metrics.model.snapshots;

}
