# Sourced by scripts that run the Python client's tests (clients/python/tests, run by PythonClientGateTest): they
# run on /usr/bin/python3 (Debian's, pinned: the client is standard library only, the tests need pytest, and numpy
# for the numpy-view rows). Installs Debian's python3-pytest and python3-numpy with apt-get when missing and running
# as root; otherwise stops with a message naming the packages. Never skips: a test run without them is a broken setup.
_orbitkv_python_client_ok() {
  /usr/bin/python3 -c 'import sys, pytest, numpy; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1
}
if ! _orbitkv_python_client_ok; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "/usr/bin/python3 with pytest and numpy not found: installing Debian packages python3 python3-pytest python3-numpy" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-pytest python3-numpy) >&2
  fi
  if ! _orbitkv_python_client_ok; then
    echo "OrbitKV's Python client tests need /usr/bin/python3 (>= 3.10) with pytest and numpy: install the Debian packages python3-pytest python3-numpy, e.g. 'sudo apt-get install python3-pytest python3-numpy'" >&2
    exit 1
  fi
fi
