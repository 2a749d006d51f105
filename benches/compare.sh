#!/usr/bin/env bash
# Gantry side by side with kubectl, on one simulated cloud, in one run. Prints `name: value` lines:
#
#   log_throughput_ratio_vs_kubectl      gantry logs --follow vs kubectl logs -f -l ... --prefix
#                                        --max-log-requests 8, same kind of Job (8 pods at
#                                        SIM_LINES_PER_SECOND=0), alternated, median of ratios
#   log_throughput_fraction_of_emitted   Gantry's lines/s over the simulator's emission rate, 8
#                                        pods writing PACED_LPS (100,000) lines/s each; _unpaced:
#                                        the same in the runs above, as fast as it writes
#   tui_bytes_to_terminal_per_line       the TUI in tmux following 1,000 lines/s (8 pods), and its
#   tui_follow_cpu_percent_1000_lps      CPU and bytes to the terminal a second meanwhile
#   tui_follow_terminal_bytes_per_s_1000_lps
#   tui_idle_cpu_percent                 the same TUI, 30 s with nothing changing
#   tui_idle_terminal_bytes_per_s
#   tui_rss_mb_5000_pods_100k_lines      peak RSS (VmHWM) of the TUI following 5,000 pods, and the
#   tui_rss_anon_mb_5000_pods_100k_lines RssAnon it holds at the end
#   tui_idle_rss_mb_20_pods              RSS of the TUI (100x32) idle with 20 finished pods shown;
#   tui_idle_rss_anon_mb_20_pods         what it holds itself (RssAnon: heap, stacks), and its PSS
#   tui_idle_pss_mb_20_pods
#   frame_render_ms_p99                  from the `tui` benchmark's percentile loop (and
#   metrics_frame_ms_p99                 the metrics pane's alone)
#   tui_bytes_per_line_{5,1000}_lps      (SECTIONS=wire) the TUI in a 100x32 tmux pane under SSH
#   tui_newest_line_lag_ms_p99           pacing (SSH_CONNECTION set: 4 frames/s), following one
#   tui_key_to_frame_ms_p99              pod at 5 and at 1,000 lines/s for 20 s each: bytes to
#                                        the terminal per line received; from the model's news
#                                        to the frame showing it (worse of both rates); from a
#                                        key's arrival to its frame's flush while 1,000 lines/s
#                                        arrive (both in-process: GANTRY_LOG=gantry::frames=debug)
#   serve_cpu_percent_{1,8,16}_viewers   `gantry serve` with 1, 8, 16 SSH clients (100x32) following
#   serve_rss_mb_{1,8,16}_viewers        1,000 lines/s, once 100,000 lines are held (RSS, and what
#   serve_rss_anon_mb_{1,8,16}_viewers   the process holds itself: RssAnon and PSS); and
#   serve_pss_mb_{1,8,16}_viewers
#   serve_mb_per_added_viewer            (RSS at 16 - RSS at 1) / 15
#   peer_*                               (SECTIONS=peer) the table of the issue on leanness, in one
#                                        place: the release binary's size; each tool in a 100x32
#                                        tmux pane with its own defaults, 20 s a situation (at rest
#                                        with 20 finished pods; following one pod at 5 and at 1,000
#                                        lines/s): CPU, bytes to the terminal a second, RSS and
#                                        RssAnon; Gantry's newest-line lag p99 (model's news to the
#                                        frame's flush). With KDASH=<kdash binary>, kdash's too,
#                                        its logs opened by KDASH_LOG_KEYS ("Enter Enter": the pod,
#                                        then its container, from its Pods list).
#
# Everything runs on 127.0.0.1 in a temporary directory and is stopped on exit.
# Needs: cargo, kubectl, tmux, jq, curl, ssh, ssh-keygen. Takes a few minutes.
# Knobs (environment): RUNS (5), LINES_PER_POD (150000), PACED_LPS (100000), IDLE_SECS (30), BIG_PODS (5000),
# PEER_SECS (20), KDASH, KDASH_LOG_KEYS,
# SECTIONS ("throughput tui rss idle serve frames wire peer": the parts to run), BIN (a gantry binary to
# measure instead of building the release one: to compare two builds), TUI_WRAPPER (a profiler to run the
# TUI under, e.g. "heaptrack -o /tmp/gantry-tui"; its figures are then not the TUI's).

set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
LINES_PER_POD=${LINES_PER_POD:-150000}
IDLE_SECS=${IDLE_SECS:-30}
BIG_PODS=${BIG_PODS:-5000}
PACED_LPS=${PACED_LPS:-100000}
TIME_SCALE=0.01 # the simulator's: SIM_LINES_PER_SECOND counts simulated seconds
SECTIONS=${SECTIONS:-throughput tui rss idle serve frames wire peer}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }

log() { echo "# $*" >&2; }

for tool in cargo kubectl tmux jq curl ssh ssh-keygen; do
    command -v "$tool" >/dev/null || { echo "compare.sh: $tool is needed" >&2; exit 2; }
done

if [ -z "${BIN:-}" ]; then
    log "building (release)"
    if want frames; then cargo bench --quiet --bench tui --no-run 2>/dev/null; fi
    # The release binary is built last and measured from a copy: `cargo bench` builds the binary
    # too, under the bench profile, and leaves it at target/release/gantry; what is measured is
    # what README's first command runs.
    cargo build --release --quiet --bin gantry
fi
GANTRY_BIN=${BIN:-target/release/gantry}

WORK=$(mktemp -d /tmp/gantry-compare.XXXXXX)
cp "$GANTRY_BIN" "$WORK/gantry"
BIN=$WORK/gantry
TMUX_SOCKET="gantry-compare-$$"
SIM_PID=""
cleanup() {
    set +e
    tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null
    if [ -n "$SIM_PID" ]; then
        kill "$SIM_PID" 2>/dev/null
        wait "$SIM_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# Every file Gantry writes (saved logs, kubeconfig entries) stays in the temp directory; cargo
# (for the frame benchmark) keeps finding its toolchain where HOME said it was.
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export HOME="$WORK/home" XDG_STATE_HOME="$WORK/state"
mkdir -p "$HOME" "$XDG_STATE_HOME"
# Only loopback: no proxy, ever.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost

SIM="$WORK/sim"
"$BIN" --time-scale "$TIME_SCALE" sim --state-dir "$SIM" >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do [ -s "$SIM/endpoints.json" ] && break; sleep 0.1; done
GKE=$(jq -r .gke "$SIM/endpoints.json")
case "$GKE" in http://127.0.0.1:*) ;; *) echo "compare.sh: unexpected GKE endpoint $GKE" >&2; exit 1;; esac
G=("$BIN" --gke-endpoint "$GKE" --access-token-file "$SIM/token"
   --project demo-project --location us-central1-a --no-kubeconfig)

# The seed's cluster name, but big enough for 5,000 pods (110 pods a node): 60 × n1-standard-16.
log "creating ml-gke-cluster (60 x n1-standard-16) through the GKE API"
curl -sf -X POST -H "Authorization: Bearer $(cat "$SIM/token")" -H 'Content-Type: application/json' \
    "$GKE/v1/projects/demo-project/zones/us-central1-a/clusters" \
    -d '{"cluster": {"name": "ml-gke-cluster", "nodePools": [{"name": "default-pool",
         "initialNodeCount": 60, "config": {"machineType": "n1-standard-16"}}]}}' >/dev/null
for _ in $(seq 600); do
    status=$("${G[@]}" status --json 2>/dev/null | jq -r .cluster.status || true)
    [ "$status" = RUNNING ] && break
    sleep 0.2
done
[ "$status" = RUNNING ] || { echo "compare.sh: cluster not RUNNING ($status)" >&2; exit 1; }
export KUBECONFIG="$SIM/kubeconfig"
grep -q 'server: https://127.0.0.1:' "$KUBECONFIG" || { echo "compare.sh: kubeconfig not on loopback" >&2; exit 1; }
for _ in $(seq 100); do kubectl get nodes >/dev/null 2>&1 && break; sleep 0.1; done

now_ns() { date +%s%N; }

# Deletes every attempt and waits until their pods are gone.
clean_jobs() {
    "${G[@]}" delete job --yes >/dev/null 2>&1 || true
    kubectl wait --for=delete pod -l job=ml-training --timeout=60s >/dev/null 2>&1 || true
}

# Launches a Job of $1 pods (Indexed), extra `gantry launch` arguments after.
launch() {
    local n=$1; shift
    "${G[@]}" launch --indexed --parallelism "$n" --completions "$n" --cpu 10m --memory 16Mi "$@" >/dev/null
}

wait_running() { # $1 pods
    for _ in $(seq 600); do
        local r
        r=$(kubectl get pods -l job=ml-training --field-selector=status.phase!=Pending -o name 2>/dev/null | wc -l)
        [ "$r" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}

# The emission window of the current pods: first and last kubelet timestamp, in ns.
emission_window() {
    local first=0 last=0 pod f l
    for pod in $(kubectl get pods -l job=ml-training -o name); do
        f=$(kubectl logs "$pod" --timestamps --limit-bytes=64 | cut -d' ' -f1)
        l=$(kubectl logs "$pod" --timestamps --tail=1 | cut -d' ' -f1)
        f=$(date -d "$f" +%s%N); l=$(date -d "$l" +%s%N)
        if [ "$first" -eq 0 ] || [ "$f" -lt "$first" ]; then first=$f; fi
        if [ "$l" -gt "$last" ]; then last=$l; fi
    done
    echo "$first $last"
}

# One follow of a fresh 8-pod Job by $1 (gantry|kubectl), each pod writing $2 lines a simulated
# second (0: as fast as it can); prints "lines rate emit_rate".
follow_run() {
    clean_jobs
    launch 8 --env "SIM_LINES_PER_SECOND=${2:-0}" --env "SIM_LOG_LINES=$LINES_PER_POD"
    wait_running 8
    local out="$WORK/follow.out" start end
    start=$(now_ns)
    if [ "$1" = gantry ]; then
        "${G[@]}" logs --follow >"$out" 2>"$WORK/follow.err" || true
    else
        kubectl logs -f -l job=ml-training --prefix --max-log-requests 8 --tail=-1 >"$out" 2>"$WORK/follow.err" || true
    fi
    end=$(now_ns)
    local lines
    lines=$(wc -l <"$out")
    read -r first last < <(emission_window)
    # Both tools are started once the pods run, by then the pods have been writing for a while
    # (this script's polling, kubectl's start): a tool's time is counted from when it was
    # started, or from the first line written had it been started before, to its exit. (Counted
    # from the first line written, the script's own delay was charged to the tool: ~0.3 s of a
    # 0.8 s emission here.)
    local t0=$(( first > start ? first : start ))
    log "  started $(( (start - first) / 1000000 )) ms after the first line was written, ended $(( (end - last) / 1000000 )) ms after the last"
    awk -v n="$lines" -v a="$t0" -v b="$end" -v f="$first" -v l="$last" -v total=$((8 * LINES_PER_POD)) \
        'BEGIN { printf "%d %.0f %.0f\n", n, n / ((b - a) / 1e9), total / ((l - f) / 1e9) }'
}

if want throughput; then
log "log throughput: $RUNS runs each of gantry and kubectl, alternated, 8 pods x $LINES_PER_POD lines"
ratios=()
unpaced=()
for run in $(seq "$RUNS"); do
    if [ $((run % 2)) -eq 1 ]; then order="gantry kubectl"; else order="kubectl gantry"; fi
    declare -A rate=()
    for tool in $order; do
        read -r lines r emit < <(follow_run "$tool" 0)
        log "run $run $tool: $lines lines, $r lines/s (simulator emitted $emit lines/s)"
        [ "$lines" -eq $((8 * LINES_PER_POD)) ] || log "  $tool printed $lines of $((8 * LINES_PER_POD)) lines"
        rate[$tool]=$r
        [ "$tool" = gantry ] && unpaced+=("$(awk -v a="$r" -v b="$emit" 'BEGIN{printf "%.3f", a / b}')")
    done
    ratios+=("$(awk -v a="${rate[gantry]}" -v b="${rate[kubectl]}" 'BEGIN{printf "%.3f", a / b}')")
    unset rate
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "log_throughput_ratio_vs_kubectl: $(median "${ratios[@]}")"
log "ratios: ${ratios[*]}"

# Whether Gantry keeps up with a log, it alone: the pods write at a fixed rate, far above any
# training log's. As fast as the simulator can (above), the fraction is a contest for the 2
# cores between the writer and the follower, which writes every line twice (to its output and
# to its saved log): the less CPU Gantry takes, the faster the simulator writes.
log "keeping up: $RUNS runs of gantry, 8 pods x $LINES_PER_POD lines at $PACED_LPS lines/s each"
fractions=()
for run in $(seq "$RUNS"); do
    read -r lines r emit < <(follow_run gantry "$(awk -v r="$PACED_LPS" -v s="$TIME_SCALE" 'BEGIN{print r * s}')")
    log "run $run gantry: $lines lines, $r lines/s (simulator emitted $emit lines/s)"
    [ "$lines" -eq $((8 * LINES_PER_POD)) ] || log "  gantry printed $lines of $((8 * LINES_PER_POD)) lines"
    fractions+=("$(awk -v a="$r" -v b="$emit" 'BEGIN{printf "%.3f", a / b}')")
done
echo "log_throughput_fraction_of_emitted: $(median "${fractions[@]}")"
echo "log_throughput_fraction_of_emitted_unpaced: $(median "${unpaced[@]}")"
log "fractions: ${fractions[*]}; as fast as the simulator writes: ${unpaced[*]}"

fi

# ---------------------------------------------------------------------------------------------
# The TUI in tmux (200x50), its output to the terminal copied to a file by pipe-pane.

tui_start() { # $1 session name; prints the gantry pid
    tmux -L "$TMUX_SOCKET" new-session -d -s "$1" -x 200 -y 50 \
        "exec env TERM=xterm-256color ${TUI_WRAPPER:-} $(printf '%q ' "${G[@]}") 2>$WORK/$1.err"
    tmux -L "$TMUX_SOCKET" pipe-pane -o -t "$1" "cat >>$WORK/$1.tty"
    tmux -L "$TMUX_SOCKET" display -p -t "$1" '#{pane_pid}'
}
tty_bytes() { stat -c %s "$WORK/$1.tty" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
saved_lines() { # lines Gantry saved for the current attempt's pods
    { cat "$XDG_STATE_HOME"/gantry/logs/*/*/*.log 2>/dev/null || true; } | wc -l
}
screen_has() { tmux -L "$TMUX_SOCKET" capture-pane -p -t "$1" | grep -q "$2"; }

if want tui; then
log "TUI following 1,000 lines/s (8 pods x 125 lines/s)"
clean_jobs
rm -rf "$XDG_STATE_HOME/gantry/logs"
TUI=$(tui_start follow)
sleep 3
# 125 wall lines/s per pod at --time-scale 0.01 is 1.25 simulated lines/s; 25 s of it.
launch 8 --env SIM_LINES_PER_SECOND=1.25 --env SIM_LOG_LINES=3125
wait_running 8
sleep 5
b0=$(tty_bytes follow); l0=$(saved_lines); c0=$(cpu_ticks "$TUI"); t0=$(now_ns)
sleep 10
b1=$(tty_bytes follow); l1=$(saved_lines); c1=$(cpu_ticks "$TUI"); t1=$(now_ns)
awk -v b=$((b1 - b0)) -v l=$((l1 - l0)) -v t=$((t1 - t0)) -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
    printf "# %d bytes to the terminal for %d lines in %.1f s (%.0f lines/s, %.0f bytes/s)\n", b, l, t / 1e9, l / (t / 1e9), b / (t / 1e9) > "/dev/stderr"
    printf "tui_bytes_to_terminal_per_line: %.1f\n", b / l
    printf "tui_follow_cpu_percent_1000_lps: %.2f\n", 100 * (c / hz) / (t / 1e9)
    printf "tui_follow_terminal_bytes_per_s_1000_lps: %.0f\n", b / (t / 1e9) }'

log "TUI idle: waiting for the Job to end, then ${IDLE_SECS} s with nothing changing"
kubectl wait --for=condition=complete job -l job=ml-training --timeout=120s >/dev/null 2>&1 || true
sleep 3
c0=$(cpu_ticks "$TUI"); b0=$(tty_bytes follow); t0=$(now_ns)
sleep "$IDLE_SECS"
c1=$(cpu_ticks "$TUI"); b1=$(tty_bytes follow); t1=$(now_ns)
hz=$(getconf CLK_TCK)
awk -v c=$((c1 - c0)) -v hz="$hz" -v b=$((b1 - b0)) -v t=$((t1 - t0)) 'BEGIN {
    printf "tui_idle_cpu_percent: %.3f\n", 100 * (c / hz) / (t / 1e9)
    printf "tui_idle_terminal_bytes_per_s: %.1f\n", b / (t / 1e9) }'
tmux -L "$TMUX_SOCKET" send-keys -t follow q
sleep 1

fi

if want rss; then
log "TUI following $BIG_PODS pods until 100,000 lines are held"
clean_jobs
rm -rf "$XDG_STATE_HOME/gantry/logs"
# 20 lines a pod, one a wall second (0.01 simulated lines/s at --time-scale 0.01): all pods
# stream at once for about 20 s.
launch "$BIG_PODS" --env SIM_LINES_PER_SECOND=0.01 --env SIM_LOG_LINES=$((100000 / BIG_PODS))
TUI=$(tui_start big)
wanted=$(( (100000 / BIG_PODS) * BIG_PODS ))
for _ in $(seq 900); do
    held=$(saved_lines)
    [ "$held" -ge "$wanted" ] && break
    sleep 0.2
done
sleep 2
running=$({ kubectl get pods -l job=ml-training --no-headers 2>/dev/null || true; } | wc -l)
log "$held lines saved by the TUI; $running pods in the Job"
screen_has big " $wanted lines " || log "the logs pane does not show $wanted lines: $(tmux -L "$TMUX_SOCKET" capture-pane -p -t big | grep -o '[0-9]* lines' | head -1)"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$TUI/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$TUI/status")
log "VmHWM ${hwm} kB, VmRSS ${rss} kB"
# What the resident pages are: the heap (anonymous) against the binary's own pages (file).
log "open sockets: $(find "/proc/$TUI/fd" -lname 'socket:*' 2>/dev/null | wc -l)"
log "now: $(grep -E '^(Rss|Pss_Anon|Pss_File):' "/proc/$TUI/smaps_rollup" | tr -s ' ' | paste -sd' ')"
anon=$(awk '/RssAnon/ {print $2}' "/proc/$TUI/status")
awk -v k="$hwm" -v a="$anon" 'BEGIN {
    printf "tui_rss_mb_5000_pods_100k_lines: %.1f\n", k / 1024
    printf "tui_rss_anon_mb_5000_pods_100k_lines: %.1f\n", a / 1024 }'
tmux -L "$TMUX_SOCKET" send-keys -t big q
sleep 1

fi

if want idle; then
log "TUI idle with 20 finished pods on screen (100x32)"
clean_jobs
rm -rf "$XDG_STATE_HOME/gantry/logs"
launch 20 --env SIM_LINES_PER_SECOND=10 --env SIM_LOG_LINES=50
kubectl wait --for=condition=complete job -l job=ml-training --timeout=120s >/dev/null 2>&1 || true
tmux -L "$TMUX_SOCKET" new-session -d -s idle -x 100 -y 32 \
    "exec env TERM=xterm-256color ${TUI_WRAPPER:-} $(printf '%q ' "${G[@]}") 2>$WORK/idle.err"
TUI=$(tmux -L "$TMUX_SOCKET" display -p -t idle '#{pane_pid}')
for _ in $(seq 300); do screen_has idle "Succeeded" && break; sleep 0.1; done
sleep "$IDLE_SECS"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$TUI/status")
log "now: $(grep -E '^(Rss|Pss_Anon|Pss_File):' "/proc/$TUI/smaps_rollup" | tr -s ' ' | paste -sd' ')"
anon=$(awk '/RssAnon/ {print $2}' "/proc/$TUI/status")
pss=$(awk '/^Pss:/ {print $2}' "/proc/$TUI/smaps_rollup")
awk -v k="$rss" -v a="$anon" -v p="$pss" 'BEGIN {
    printf "tui_idle_rss_mb_20_pods: %.1f\n", k / 1024
    printf "tui_idle_rss_anon_mb_20_pods: %.1f\n", a / 1024
    printf "tui_idle_pss_mb_20_pods: %.1f\n", p / 1024 }'
tmux -L "$TMUX_SOCKET" send-keys -t idle q
sleep 1
fi

if want serve; then
log "gantry serve: 1, 8 and 16 SSH viewers following 1,000 lines/s (8 pods x 125 lines/s)"
clean_jobs
rm -rf "$XDG_STATE_HOME/gantry/logs"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/viewer"
cp "$WORK/viewer.pub" "$WORK/authorized_keys"
# 125 wall lines/s per pod for 200 s: 100,000 lines held after 100 s, then the measurements.
launch 8 --env SIM_LINES_PER_SECOND=1.25 --env SIM_LOG_LINES=25000
"${G[@]}" serve --ssh-listen 127.0.0.1:0 --authorized-keys "$WORK/authorized_keys" \
    --host-key "$WORK/host_key" --operators "$WORK/none" 2>"$WORK/serve.err" &
SERVE=$!
for _ in $(seq 100); do grep -q 'listening on' "$WORK/serve.err" && break; sleep 0.1; done
PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$WORK/serve.err" | cut -d: -f2)
viewer() { # one SSH client at 100x32 in tmux, its output discarded by the terminal
    tmux -L "$TMUX_SOCKET" new-session -d -s "v$1" -x 100 -y 32 \
        "ssh -tt -p $PORT -i $WORK/viewer -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null 127.0.0.1"
}
wait_running 8
for _ in $(seq 1200); do [ "$(saved_lines)" -ge 100000 ] && break; sleep 0.1; done
log "$(saved_lines) lines held"
viewers=0
for n in 1 8 16; do
    while [ "$viewers" -lt "$n" ]; do viewers=$((viewers + 1)); viewer "$viewers"; done
    sleep 3
    c0=$(cpu_ticks "$SERVE"); t0=$(now_ns)
    sleep 10
    c1=$(cpu_ticks "$SERVE"); t1=$(now_ns)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$SERVE/status")
    anon=$(awk '/RssAnon/ {print $2}' "/proc/$SERVE/status")
    pss=$(awk '/^Pss:/ {print $2}' "/proc/$SERVE/smaps_rollup")
    eval "rss_$n=$rss"
    awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v t=$((t1 - t0)) -v n="$n" -v k="$rss" -v a="$anon" -v p="$pss" 'BEGIN {
        printf "serve_cpu_percent_%d_viewers: %.1f\n", n, 100 * (c / hz) / (t / 1e9)
        printf "serve_rss_mb_%d_viewers: %.1f\n", n, k / 1024
        printf "serve_rss_anon_mb_%d_viewers: %.1f\n", n, a / 1024
        printf "serve_pss_mb_%d_viewers: %.1f\n", n, p / 1024 }'
done
log "$(saved_lines) lines held at the end"
awk -v a="$rss_1" -v b="$rss_16" 'BEGIN { printf "serve_mb_per_added_viewer: %.2f\n", (b - a) / 1024 / 15 }'
kill "$SERVE"; wait "$SERVE" 2>/dev/null || true
grep -c 'viewer left' "$WORK/serve.err" | sed 's/^/# viewers that left cleanly: /' >&2
fi

if want frames; then
log "frame percentiles (cargo bench --bench tui, percentile loop only)"
GANTRY_BENCH_PERCENTILES_ONLY=1 cargo bench --quiet --bench tui >"$WORK/bench.out" 2>"$WORK/bench.err" ||
    { echo "compare.sh: cargo bench --bench tui failed:" >&2; tail -20 "$WORK/bench.err" >&2; exit 1; }
grep -E '^\[tui\]' "$WORK/bench.out" | sed 's/^/# /' >&2 || true
grep -E '^(frame_render|metrics_frame)_ms_p99:' "$WORK/bench.out"
fi

# ---------------------------------------------------------------------------------------------
# The bytes an SSH link carries: the TUI at 100x32 (the compact layout, logs pane full width)
# with SSH pacing, following one pod.

p99() { sort -n | awk '{v[NR]=$1} END { if (NR == 0) { print "nan"; exit } i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; printf "%.1f\n", v[i] / 1000 }'; }
frame_field() { grep -o "$2=[0-9]*" "$1" | cut -d= -f2 || true; }

if want wire; then
WIRE_SECS=${WIRE_SECS:-20}
lags=()
for lps in 5 1000; do
    name="wire$lps"
    log "TUI at 100x32 under SSH pacing following one pod at $lps lines/s for $WIRE_SECS s"
    clean_jobs
    rm -rf "$XDG_STATE_HOME/gantry/logs"
    # Simulated lines/s are wall lines/s / 100 at --time-scale 0.01; enough lines for the
    # warm-up, the measurement and the keys after it.
    launch 1 --env "SIM_LINES_PER_SECOND=$(awk -v r="$lps" 'BEGIN{print r / 100}')" \
        --env "SIM_LOG_LINES=$((lps * (WIRE_SECS + 30)))"
    wait_running 1
    tmux -L "$TMUX_SOCKET" new-session -d -s "$name" -x 100 -y 32 \
        "exec env TERM=xterm-256color SSH_CONNECTION='127.0.0.1 50000 127.0.0.1 22' GANTRY_LOG=gantry::frames=debug $(printf '%q ' "${G[@]}") --log-file $WORK/$name.log 2>$WORK/$name.err"
    tmux -L "$TMUX_SOCKET" pipe-pane -o -t "$name" "cat >>$WORK/$name.tty"
    sleep 5
    : >"$WORK/$name.log"
    b0=$(tty_bytes "$name"); l0=$(saved_lines); t0=$(now_ns)
    sleep "$WIRE_SECS"
    b1=$(tty_bytes "$name"); l1=$(saved_lines); t1=$(now_ns)
    cp "$WORK/$name.log" "$WORK/$name.window.log"
    awk -v b=$((b1 - b0)) -v l=$((l1 - l0)) -v t=$((t1 - t0)) -v r="$lps" 'BEGIN {
        printf "# %d bytes to the terminal for %d lines in %.1f s (%.0f lines/s, %.0f bytes/s)\n", b, l, t / 1e9, l / (t / 1e9), b / (t / 1e9) > "/dev/stderr"
        printf "tui_bytes_per_line_%d_lps: %.1f\n", r, (l > 0) ? b / l : -1 }'
    frames=$(grep -c ' frame ' "$WORK/$name.window.log" || true)
    scrolled=$(grep -c 'scrolled=[1-9]' "$WORK/$name.window.log" || true)
    log "$frames frames in the window, $scrolled of them scrolled the logs with the terminal"
    lag=$(frame_field "$WORK/$name.window.log" news_to_frame_us | p99)
    log "newest line lag p99 at $lps lines/s: $lag ms"
    lags+=("$lag")
    if [ "$lps" = 1000 ]; then
        # Keys while the lines keep coming: the logs pane's focus and back, 40 times.
        : >"$WORK/$name.log"
        for _ in $(seq 40); do
            tmux -L "$TMUX_SOCKET" send-keys -t "$name" Tab
            sleep 0.25
        done
        keys=$(frame_field "$WORK/$name.log" key_to_frame_us | wc -l)
        log "$keys frames answered a key"
        echo "tui_key_to_frame_ms_p99: $(frame_field "$WORK/$name.log" key_to_frame_us | p99)"
    fi
    tmux -L "$TMUX_SOCKET" send-keys -t "$name" q
    sleep 1
done
printf '%s\n' "${lags[@]}" | sort -g | tail -1 | sed 's/^/tui_newest_line_lag_ms_p99: /'
fi

# ---------------------------------------------------------------------------------------------
# Beside a peer: each tool in a 100x32 pane with its own defaults (no SSH pacing: a desk), the
# same pods, PEER_SECS a situation. kdash is measured when KDASH names its binary.

if want peer; then
PEER_SECS=${PEER_SECS:-20}
KDASH_LOG_KEYS=${KDASH_LOG_KEYS:-Enter Enter}
peer_tools=(gantry)
[ -n "${KDASH:-}" ] && peer_tools+=(kdash)
echo "peer_binary_mb_gantry: $(awk -v b="$(stat -c %s "$BIN")" 'BEGIN { printf "%.1f", b / 1e6 }')"
if [ -n "${KDASH:-}" ]; then
    echo "peer_binary_mb_kdash: $(awk -v b="$(stat -L -c %s "$KDASH")" 'BEGIN { printf "%.1f", b / 1e6 }')"
fi

peer_start() { # $1 session, $2 tool: starts it at 100x32, its output kept; prints its pid
    local cmd
    if [ "$2" = gantry ]; then
        cmd="env TERM=xterm-256color GANTRY_LOG=gantry::frames=debug ${TUI_WRAPPER:-} $(printf '%q ' "${G[@]}") --log-file $WORK/$1.log"
    else
        cmd="env TERM=xterm-256color $(printf '%q' "$KDASH")"
    fi
    tmux -L "$TMUX_SOCKET" new-session -d -s "$1" -x 100 -y 32 "exec $cmd 2>$WORK/$1.err"
    tmux -L "$TMUX_SOCKET" pipe-pane -o -t "$1" "cat >>$WORK/$1.tty"
    tmux -L "$TMUX_SOCKET" display -p -t "$1" '#{pane_pid}'
}
# $1 session, $2 pid, $3 tool, $4 situation: PEER_SECS of CPU and bytes, then what it holds.
peer_measure() {
    local c0 c1 b0 b1 t0 t1 rss anon
    [ -f "$WORK/$1.log" ] && : >"$WORK/$1.log"
    c0=$(cpu_ticks "$2"); b0=$(tty_bytes "$1"); t0=$(now_ns)
    sleep "$PEER_SECS"
    c1=$(cpu_ticks "$2"); b1=$(tty_bytes "$1"); t1=$(now_ns)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$2/status")
    anon=$(awk '/RssAnon/ {print $2}' "/proc/$2/status")
    awk -v c=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v b=$((b1 - b0)) -v t=$((t1 - t0)) \
        -v k="$rss" -v a="$anon" -v s="$4" -v n="$3" 'BEGIN {
        printf "peer_%s_cpu_percent_%s: %.2f\n", s, n, 100 * (c / hz) / (t / 1e9)
        printf "peer_%s_terminal_bytes_per_s_%s: %.0f\n", s, n, b / (t / 1e9)
        printf "peer_%s_rss_mb_%s: %.1f\n", s, n, k / 1024
        printf "peer_%s_rss_anon_mb_%s: %.1f\n", s, n, a / 1024 }'
    if [ "$3" = gantry ] && [ "$4" != idle ]; then
        log "$(grep -c ' frame ' "$WORK/$1.log" || true) frames in the window"
        echo "peer_${4}_newest_line_lag_ms_p99_gantry: $(frame_field "$WORK/$1.log" news_to_frame_us | p99)"
    fi
}
# The logs of the one pod on screen: Gantry shows the Job's at start; kdash from its Pods list.
peer_open_logs() { # $1 session, $2 tool
    [ "$2" = gantry ] && return 0
    for _ in $(seq 100); do screen_has "$1" "ml-training" && break; sleep 0.1; done
    local key
    for key in $KDASH_LOG_KEYS; do
        tmux -L "$TMUX_SOCKET" send-keys -t "$1" "$key"
        sleep 0.5
    done
}

log "peer, at rest: 20 finished pods, each tool for ${PEER_SECS} s"
clean_jobs
rm -rf "$XDG_STATE_HOME/gantry/logs"
launch 20 --env SIM_LINES_PER_SECOND=10 --env SIM_LOG_LINES=50
kubectl wait --for=condition=complete job -l job=ml-training --timeout=120s >/dev/null 2>&1 || true
for tool in "${peer_tools[@]}"; do
    pid=$(peer_start "idle-$tool" "$tool")
    for _ in $(seq 300); do screen_has "idle-$tool" "ml-training" && break; sleep 0.1; done
    sleep 5
    peer_measure "idle-$tool" "$pid" "$tool" idle
    tmux -L "$TMUX_SOCKET" kill-session -t "idle-$tool"
done

for lps in 5 1000; do
    log "peer, following one pod at $lps lines/s, each tool for ${PEER_SECS} s"
    clean_jobs
    rm -rf "$XDG_STATE_HOME/gantry/logs"
    # Long enough for every tool's warm-up and window (simulated lines/s: wall / 100).
    launch 1 --env "SIM_LINES_PER_SECOND=$(awk -v r="$lps" 'BEGIN{print r / 100}')" \
        --env "SIM_LOG_LINES=$((lps * (PEER_SECS + 15) * ${#peer_tools[@]}))"
    wait_running 1
    for tool in "${peer_tools[@]}"; do
        pid=$(peer_start "follow$lps-$tool" "$tool")
        peer_open_logs "follow$lps-$tool" "$tool"
        sleep 5
        peer_measure "follow$lps-$tool" "$pid" "$tool" "follow_${lps}_lps"
        tmux -L "$TMUX_SOCKET" kill-session -t "follow$lps-$tool"
    done
done
fi
