#!/usr/bin/env bash
# Instructions per line of the metrics and ingest benchmarks' cases, counted by callgrind: the
# same figure on every run, so a change of a few per cent is seen on a busy machine where
# criterion's times move by ten. Each case runs alone in the bench binary
# (GANTRY_BENCH_COUNT=<case>:<n>) and only its `counted_*` function is counted. Prints
# `case: instructions/line` lines.
#
#   benches/instructions.sh                 every case
#   benches/instructions.sh plain stream    those cases (LINES' names in benches/metrics.rs,
#                                           stream, ingest/short, ingest/mixed, ingest/1kib,
#                                           ingest/escapes)
#
# Needs: cargo, valgrind, jq. CARGO_TARGET_DIR is honoured. The ingest cases first fill the
# screen's buffer (100,000 lines, not counted): about a minute each under valgrind.

set -euo pipefail
cd "$(dirname "$0")/.."

CASES=("$@")
if [[ ${#CASES[@]} -eq 0 ]]; then
    CASES=(no_metrics no_metrics_with_colon plain hf_dict tqdm keras json stream
        ingest/short ingest/mixed)
fi

# The bench binaries, built as `cargo bench` builds them.
declare -A EXE
while IFS=$'\t' read -r name path; do
    EXE[$name]=$path
done < <(cargo bench --locked --no-run --bench metrics --bench tui --message-format=json 2>/dev/null |
    jq -r 'select(.reason == "compiler-artifact" and .target.kind == ["bench"] and .executable != null)
        | [.target.name, .executable] | @tsv')

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for case in "${CASES[@]}"; do
    case $case in
        stream) exe=${EXE[metrics]} n=2 ;;
        ingest/*) exe=${EXE[tui]} n=40 ;;
        *) exe=${EXE[metrics]} n=20000 ;;
    esac
    said=$(GANTRY_BENCH_COUNT="$case:$n" valgrind --tool=callgrind --toggle-collect='*counted_*' \
        --callgrind-out-file="$out/callgrind.out" "$exe" 2>/dev/null)
    lines=${said##*: }
    lines=${lines%% *}
    total=$(awk '/^(summary|totals):/ { print $2; exit }' "$out/callgrind.out")
    awk -v c="$case" -v t="$total" -v l="$lines" 'BEGIN { printf "%s: %.1f\n", c, t / l }'
done
