#!/usr/bin/env bash
# scripts/bench qualify [--smoke] [--force] [--runs N] [--skip STEP[,STEP]] [--isolation-pairs DIR] [Maven args...]
#   (issue 37 item 1)
# Runs every formal contract cell of docs/performance.md in sequence on a quiet machine, under the shared bench lock:
#   visibility collection, P1/P2 (N consecutive runs), bootstrap (N consecutive runs), isolation (PERF-3, DRAM and SSD),
#   restore end to end (local, peer TCP/shm vs raw and the raw relay arm, Mooncake margin, one block, save),
#   READ ratios (TCP and shared memory vs copy + CRC32C), the Python engine bench.
# Every harness judges its cells through orbitkv.testing.ContractVerdicts and appends them to one verdict file
# (-Dbench.verdicts); a step that ends without a verdict is a COLLECTION FAILED row. Prints ONE table (contract,
# threshold, figure, spread, verdict, conditions incl. `uptime` at start and end) and exits non-zero if any cell did not
# PASS. Refuses to start when the 1-minute load average exceeds 1.5 (a quiet machine is required) unless --force.
#   --smoke   shortest durations and sizes (checks the machinery and the exit codes; its figures judge nothing)
#   --runs N  consecutive runs of P1/P2 and bootstrap (default 3, as the goals require; 1 with --smoke)
#   --skip S  steps not run in this sitting (visibility, p1, bootstrap, isolation, restore, read-ratio, engine): each
#             is a COLLECTION FAILED row saying so, so the sitting still exits non-zero (the formal isolation alone
#             takes about 6 h: 2 media x 5 pairs x 2 arms x 1,050 rounds at 1 s; it is its own sitting)
#   --isolation-pairs DIR  the isolation step judges the pairs recorded in DIR (an isolation resume directory, filled
#             by earlier sittings of `scripts/bench isolation -Dbench.isolation.resumeDir=DIR` with the same settings)
#             and runs no new pair (pairsThisSitting=0): a matrix DIR does not complete is COLLECTION FAILED. The table
#             names DIR, its pair count and when its pairs were recorded, so the figures' dates are not this sitting's.
# Other arguments (for example -o) are handed to every Maven run. Files: ${TMPDIR:-/tmp}/orbitkv-bench/<UTC>-qualify/,
# the harnesses' plots in its plots/ (not docs/perf/: a sitting leaves the checkout as it found it, so the plots that
# earlier records show stay theirs; copy a plot into docs/perf/ with the record that shows it).
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/jdk.sh
smoke=0 force=0 runs="" skip="," iso_pairs=""
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --smoke) smoke=1 ;;
        --force) force=1 ;;
        --runs) runs=${2:?--runs N}; shift ;;
        --skip) skip=",${2:?--skip STEP[,STEP]},"; shift ;;
        --isolation-pairs) iso_pairs=${2:?--isolation-pairs DIR}; shift ;;
        *) extra+=("$1") ;;
    esac
    shift
done
[ -n "$runs" ] || runs=$([ $smoke = 1 ] && echo 1 || echo 3)
case "$runs" in ''|*[!0-9]*|0) echo "scripts/bench qualify: --runs takes a positive number, got '$runs'" >&2; exit 2 ;; esac
LOAD_MAX=1.5
iso_from=()
iso_note="isolation: run in this sitting"
if [ -n "$iso_pairs" ]; then
    [ -f "$iso_pairs/matrix.properties" ] || { echo "scripts/bench qualify: --isolation-pairs '$iso_pairs' is not an isolation resume directory (no matrix.properties)" >&2; exit 2; }
    iso_pairs=$(cd "$iso_pairs" && pwd)
    iso_from=(-Dbench.isolation.resumeDir="$iso_pairs" -Dbench.isolation.pairsThisSitting=0)
    recorded=$(sed -n 's/^recorded=//p' "$iso_pairs"/*/pair.properties 2>/dev/null | sed 's/\\//g' | sort)
    iso_note="isolation: no new pair; judged over the $(printf '%s\n' "$recorded" | grep -c .) pairs recorded in $iso_pairs ($(printf '%s\n' "$recorded" | head -1 | cut -c1-16) to $(printf '%s\n' "$recorded" | tail -1 | cut -c1-16) UTC)"
fi

case "$skip" in *,isolation,*) iso_note="isolation: not run in this sitting (--skip)${iso_pairs:+; the pairs in $iso_pairs not judged}" ;; esac

dir="${TMPDIR:-/tmp}/orbitkv-bench/$(date -u +%Y%m%d-%H%M%S)-qualify"
mkdir -p "$dir"
verdicts="$dir/verdicts.tsv"
: > "$verdicts"

exec 9>/tmp/orbitkv-bench.lock
if ! flock -n 9; then
    echo "scripts/bench qualify: waiting for /tmp/orbitkv-bench.lock (another benchmark is running)"
    flock 9
fi
load_start=$(uptime)
load1=$(cut -d' ' -f1 /proc/loadavg)
quiet=yes
if awk -v l="$load1" -v m="$LOAD_MAX" 'BEGIN { exit !(l > m) }'; then
    quiet=no
    if [ $force = 0 ]; then
        echo "scripts/bench qualify: refused: 1-minute load average $load1 > $LOAD_MAX (a quiet machine is required; --force runs anyway, and the table says so)" >&2
        echo "  $load_start" >&2
        exit 3
    fi
    echo "scripts/bench qualify: WARNING: 1-minute load average $load1 > $LOAD_MAX: NOT a quiet machine (--force); no figure of this sitting qualifies"
fi
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo "+dirty")
echo "scripts/bench qualify: $([ $smoke = 1 ] && echo SMOKE || echo formal) sitting, commit $commit, $runs run(s) of P1/bootstrap; files in $dir"
echo "  at start: $load_start"

# step NAME COMMAND...: runs one harness with the verdict file; a step without any verdict is a COLLECTION FAILED row
step() {
    local name=$1; shift
    local log="$dir/$name.log" before after code
    case "$skip" in *",${name%-run*},"*)
        echo "== $name: skipped (--skip)"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "scripts/bench qualify" "$name" "a verdict" "-" "" "COLLECTION FAILED" \
            "not run in this sitting (--skip)" >> "$verdicts"
        return ;;
    esac
    before=$(wc -l < "$verdicts")
    echo "== $name: $* (log $log)"
    "$@" "-Dbench.verdicts=$verdicts" "-Dbench.docsPlots=$dir/plots" "${extra[@]}" > "$log" 2>&1
    code=$?
    grep -aE '^(PASS|FAIL|COLLECTION FAILED) ' "$log" | sed 's/^/   /'
    after=$(wc -l < "$verdicts")
    echo "   exit $code, $((after - before)) verdict(s), $(uptime | sed 's/.*load/load/')"
    if [ "$after" -eq "$before" ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "scripts/bench qualify" "$name" "a verdict" "-" "" "COLLECTION FAILED" \
            "exit $code before any verdict; log $log" >> "$verdicts"
    fi
}

if [ $smoke = 1 ]; then
    vis=(-Dbench.visibility.owners=2 -Dbench.visibility.warmup=2 -Dbench.visibility.samples=8)
    p1=(-Dbench.p1.owners=2 -Dbench.p1.residences=64 -Dbench.p1.burst=4 -Dbench.p1.cadenceMs=10 -Dbench.p1.namespaces=2
        -Dbench.p1.warmup=2 -Dbench.p1.samples=10 -Dbench.p1.minSeconds=5 -Dbench.p1.controlSeconds=5)
    boot=(-Dbench.residences=100000 -Dbench.warmup=1 -Dbench.rounds=3)
    iso=(-Dbench.isolation.pairs=1 -Dbench.isolation.warmup=2 -Dbench.isolation.rounds=12 -Dbench.isolation.foregroundMs=150
         -Dbench.isolation.blocks=4 -Dbench.isolation.blockBytes=16384 -Dbench.isolation.pressureResidences=512)
    restore=(-Dbench.restore.cases=1x65536,16x65536,16x1048576,16x4194304 -Dbench.restore.warmupExchanges=200 -Dbench.restore.warmupCaseMs=200
             -Dbench.restore.warmup=1 -Dbench.restore.rounds=2)
    read=(-Dbench.blocks=65536,1048576 -Dbench.warmup=1 -Dbench.rounds=4 -Dbench.warmupReads=500)
    engine=(-Dbench.engine.smoke=true)
else
    vis=() p1=() boot=() iso=() restore=() read=() engine=()
fi
step visibility scripts/bench visibility "${vis[@]}"
for i in $(seq 1 "$runs"); do step "p1-run$i" scripts/bench p1 "${p1[@]}"; done
for i in $(seq 1 "$runs"); do step "bootstrap-run$i" scripts/bench bootstrap "${boot[@]}"; done
step isolation scripts/bench isolation "${iso[@]}" "${iso_from[@]}"
step restore scripts/bench restore "${restore[@]}"
step read-ratio scripts/bench read "${read[@]}"
step engine scripts/bench engine "${engine[@]}"

load_end=$(uptime)
# the one table, rendered by the verdict class itself (compiled on its own: no dependency beyond java.base)
javac -nowarn -d "$dir/classes" orbitkv.testing/src/main/java/orbitkv/testing/ContractVerdicts.java || exit 2
java -cp "$dir/classes" orbitkv.testing.ContractVerdicts "$verdicts" \
    "$([ $smoke = 1 ] && echo "SMOKE sitting (shortened: figures judge nothing)" || echo "formal sitting"), commit $commit, $runs run(s) of P1/P2 and bootstrap, $(date -u '+%Y-%m-%d %H:%M UTC')" \
    "quiet machine (1-min load ≤ $LOAD_MAX at start): $quiet$([ $force = 1 ] && echo ' (--force)')" "$iso_note" \
    "at start: $load_start" "at end:   $load_end" "files: $dir" | tee "$dir/table.md"
exit "${PIPESTATUS[0]}"
