# Sourced by scripts that run the second-language requester (conformance/src/test/python/requester.py, run by
# ExternalRequesterGateTest): it needs /usr/bin/python3 with grpcio and protobuf, and protoc to generate the
# message classes from the .proto at test time. Installs Debian's python3-grpcio, python3-protobuf and
# protobuf-compiler with apt-get when something is missing and running as root; otherwise stops with a message
# naming the packages. Never skips: a test run without them is a broken setup.
_orbitkv_python_grpc_ok() {
  /usr/bin/python3 -c 'import grpc, google.protobuf' >/dev/null 2>&1 && command -v protoc >/dev/null 2>&1
}
if ! _orbitkv_python_grpc_ok; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "python3 grpcio/protobuf or protoc not found: installing Debian packages python3-grpcio python3-protobuf protobuf-compiler" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-grpcio python3-protobuf protobuf-compiler) >&2
  fi
  if ! _orbitkv_python_grpc_ok; then
    echo "OrbitKV's second-language requester needs /usr/bin/python3 with grpcio and protobuf, and protoc: install the Debian packages python3-grpcio python3-protobuf protobuf-compiler, e.g. 'sudo apt-get install python3-grpcio python3-protobuf protobuf-compiler'" >&2
    exit 1
  fi
fi
