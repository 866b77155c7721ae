#!/usr/bin/env bash
# Opt-in real-engine check of the OrbitKV engine backends (issue 36 item 5); NOT part of the default test run.
# On a machine that can install lmcache (with a CPU-only torch) and sglang from the Python registry:
#   clients/python/e2e/run_lmcache_e2e.sh [PYTHON]      (ORBITKV=path/to/orbitkv launcher, default the built image)
# Checks (each one passes or fails; a package that cannot be installed FAILS its checks, loudly, never skips):
#   1. LMCache's own connector loader returns the OrbitKV connector for plugin://orbitkv; 8 chunks in the
#      Qwen2.5-7B layout (14 MiB each) put through it read back bit-equal; put refcounts return to their values.
#   2. SGLang's storage backend factory builds the OrbitKV backend; pages set and read back bit-equal.
# Prints one closing line "N passed, N failed"; exits non-zero when anything failed.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
PY="${1:-python3}"
ORBITKV="${ORBITKV:-$ROOT/dist/target/orbitkv/bin/orbitkv}"
WORK="$(mktemp -d -t orbitkv-e2e-XXXXXX)"
passed=0
failed=0
MANAGER_PID=""
cleanup() { [ -n "$MANAGER_PID" ] && kill "$MANAGER_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2" >&2; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

if ! "$PY" -m venv "$WORK/venv" >"$WORK/venv.log" 2>&1; then
  fail "lmcache" "cannot create a virtual environment with $PY ($(tail -1 "$WORK/venv.log"))"
  fail "sglang" "cannot create a virtual environment with $PY"
  finish
fi
VPY="$WORK/venv/bin/python"
PIP=("$VPY" -m pip install --disable-pip-version-check --timeout 30 --retries 1)
"${PIP[@]}" "$ROOT/clients/python" numpy >"$WORK/pip-orbitkv.log" 2>&1 || { fail "orbitkv-client" "pip install of clients/python failed: $(tail -2 "$WORK/pip-orbitkv.log")"; }

have_lmcache=0
have_sglang=0
if "${PIP[@]}" --index-url https://download.pytorch.org/whl/cpu torch >"$WORK/pip-torch.log" 2>&1 \
   && "${PIP[@]}" "lmcache>=0.5.6,<0.6" >"$WORK/pip-lmcache.log" 2>&1; then
  have_lmcache=1
else
  fail "lmcache" "cannot install lmcache>=0.5.6,<0.6 with a CPU torch here: $(tail -n 2 "$WORK"/pip-torch.log "$WORK"/pip-lmcache.log 2>/dev/null | tr '\n' ' ')"
fi
if "${PIP[@]}" sglang >"$WORK/pip-sglang.log" 2>&1; then
  have_sglang=1
else
  fail "sglang" "cannot install sglang here: $(tail -n 2 "$WORK/pip-sglang.log" | tr '\n' ' ')"
fi
[ $((have_lmcache + have_sglang)) -eq 0 ] && finish

if [ ! -x "$ORBITKV" ]; then
  [ $have_lmcache = 1 ] && fail "lmcache" "no OrbitKV launcher at $ORBITKV (build the image: mvn -B -ntp -pl dist -am verify -DskipTests, or set ORBITKV)"
  [ $have_sglang = 1 ] && fail "sglang" "no OrbitKV launcher at $ORBITKV"
  finish
fi
"$ORBITKV" manager --standalone --http-listen 127.0.0.1:0 --dram 1GiB --block-bytes-max 64MiB \
  --dram-dir "$WORK" >"$WORK/manager.out" 2>"$WORK/manager.err" &
MANAGER_PID=$!
URL=""
for _ in $(seq 1 600); do
  URL="$(sed -n 's/^orbitkv manager ready http=\([^ ]*\) .*/http:\/\/\1/p' "$WORK/manager.out")"
  [ -n "$URL" ] && break
  kill -0 "$MANAGER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$URL" ]; then
  [ $have_lmcache = 1 ] && fail "lmcache" "the Manager printed no ready line: $(tail -n 3 "$WORK/manager.err")"
  [ $have_sglang = 1 ] && fail "sglang" "the Manager printed no ready line"
  finish
fi

if [ $have_lmcache = 1 ]; then
  if out="$("$VPY" "$HERE/lmcache_e2e.py" "$URL" 2>&1)"; then pass "lmcache: $out"; else fail "lmcache" "$out"; fi
fi
if [ $have_sglang = 1 ]; then
  if out="$("$VPY" "$HERE/sglang_e2e.py" "$URL" 2>&1)"; then pass "sglang: $out"; else fail "sglang" "$out"; fi
fi
finish
