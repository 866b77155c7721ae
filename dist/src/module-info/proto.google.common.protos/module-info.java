// Generated once by: jdeps --multi-release 25 --ignore-missing-deps --generate-module-info (see dist/README.md).
// Regenerate when grpc, jetcd, protobuf, Vert.x, common-protos or prometheus are upgraded.
module proto.google.common.protos {
    requires transitive com.google.protobuf;

    exports com.google.api;
    exports com.google.apps.card.v1;
    exports com.google.cloud;
    exports com.google.cloud.audit;
    exports com.google.cloud.location;
    exports com.google.geo.type;
    exports com.google.logging.type;
    exports com.google.longrunning;
    exports com.google.rpc;
    exports com.google.rpc.context;
    exports com.google.shopping.type;
    exports com.google.type;

}
