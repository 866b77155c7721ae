# Sourced by scripts that need the etcd binary (real-etcd tests, the demo). Installs Debian's
# etcd-server/etcd-client with apt-get when missing and running as root; otherwise stops with a
# message naming the package. Never skips: a test run without etcd is a broken setup.
if ! command -v etcd >/dev/null 2>&1 || ! command -v etcdctl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "etcd not found: installing Debian packages etcd-server etcd-client" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server etcd-client) >&2
  else
    echo "OrbitKV needs the etcd binary: install the Debian package etcd-server (and etcd-client), e.g. 'sudo apt-get install etcd-server etcd-client'" >&2
    exit 1
  fi
fi
