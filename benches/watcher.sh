#!/usr/bin/env bash
# What the in-cluster watcher uses, measured as its requests are chosen: `gantry watcher install`
# on the simulator (its pod is this release build, a process of this machine), a 4-rank gang on
# spot nodes that the simulator reclaims twice, each reclaim recovered by the watcher. Its process
# is sampled once a second from /proc (and the pod that replaces it, if its node was the one
# reclaimed). Prints `name: value` lines:
#
#   watcher_rss_anon_mb_peak      the most the watcher held itself (RssAnon: heap and stacks)
#   watcher_rss_mb_peak           its peak RSS (VmHWM: binary pages touched included)
#   watcher_rss_anon_mb_end       what it held when the run ended
#   watcher_cpu_millicores_mean   CPU over the run, in Kubernetes' millicores
#   watcher_cpu_millicores_peak   the busiest one-second sample
#   watcher_recoveries            recoveries it made (2 expected)
#
# Knobs (environment): BIN (a gantry binary; else the release build), RANKS (4), LINES (3000:
# log lines a rank writes), LPS (20: lines a second a rank writes), PERIOD (25: seconds between
# reclaims). Needs: cargo, kubectl, jq. Takes about three minutes.

set -euo pipefail
cd "$(dirname "$0")/.."

RANKS=${RANKS:-4}
LINES=${LINES:-3000}
LPS=${LPS:-20}
PERIOD=${PERIOD:-25}
TIME_SCALE=0.01

log() { echo "# $*" >&2; }
for tool in kubectl jq; do
    command -v "$tool" >/dev/null || { echo "watcher.sh: $tool is needed" >&2; exit 2; }
done

if [ -z "${BIN:-}" ]; then
    log "building (release)"
    cargo build --release --quiet --bin gantry
    BIN=target/release/gantry
fi
WORK=$(mktemp -d /tmp/gantry-watcher.XXXXXX)
cp "$BIN" "$WORK/gantry"
BIN=$WORK/gantry
SIM_PID=""
cleanup() {
    set +e
    if [ -n "$SIM_PID" ]; then
        kill "$SIM_PID" 2>/dev/null
        wait "$SIM_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

export HOME="$WORK/home" XDG_STATE_HOME="$WORK/state" XDG_CONFIG_HOME="$WORK/config"
mkdir -p "$HOME" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME/gantry"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost

# Lines a rank writes a simulated second: the simulator's clock runs 1/TIME_SCALE as fast.
SIM_LPS=$(awk -v l="$LPS" -v t="$TIME_SCALE" 'BEGIN { printf "%g", l * t }')
cat >"$XDG_CONFIG_HOME/gantry/config.toml" <<EOF
[cluster]
spot = true
[job]
backoff-limit = 2
completions = $RANKS
parallelism = $RANKS
indexed = true
[job.recovery]
max-recoveries = 10
[job.env]
SIM_LOG_LINES = "$LINES"
SIM_LINES_PER_SECOND = "$SIM_LPS"
[watcher]
image = "registry.example/gantry:measured"
EOF

SIM="$WORK/sim"
"$BIN" --time-scale "$TIME_SCALE" sim --state-dir "$SIM" --fault "preempt=$PERIOD:2" >"$WORK/sim.log" 2>&1 &
SIM_PID=$!
for _ in $(seq 100); do [ -s "$SIM/endpoints.json" ] && break; sleep 0.1; done
GKE=$(jq -r .gke "$SIM/endpoints.json")
G=("$BIN" --gke-endpoint "$GKE" --access-token-file "$SIM/token"
   --project demo-project --location us-central1-a)
export KUBECONFIG="$WORK/home/.kube/config"

log "cluster up, watcher installed, gang of $RANKS launched"
"${G[@]}" up --wait >/dev/null
"${G[@]}" watcher install --wait >/dev/null
"${G[@]}" launch >/dev/null

# The watcher's process: the one running `--in-cluster` (a replacement has a new pid).
watcher_pid() { pgrep -n -f -- "--in-cluster" || true; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo ""; }
field_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

HZ=$(getconf CLK_TCK)
peak_anon=0 peak_rss=0 end_anon=0 cpu_sum=0 cpu_peak=0 samples=0
pid="" last=""
for _ in $(seq 600); do
    finished=$("${G[@]}" status --json 2>/dev/null | jq -r '[.job.attempts[]?.status] | last // ""')
    now=$(watcher_pid)
    if [ -n "$now" ]; then
        t=$(ticks "$now")
        if [ "$now" = "$pid" ] && [ -n "$last" ] && [ -n "$t" ]; then
            # Ticks in the last second, as millicores (the loop's own time counted in: a floor).
            m=$(( (t - last) * 1000 / HZ ))
            cpu_sum=$((cpu_sum + m)); samples=$((samples + 1))
            [ "$m" -gt "$cpu_peak" ] && cpu_peak=$m
        fi
        pid=$now last=$t
        a=$(field_kb "$now" RssAnon); r=$(field_kb "$now" VmHWM)
        [ "${a:-0}" -gt "$peak_anon" ] && peak_anon=$a
        [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
        end_anon=${a:-0}
    fi
    case "$finished" in Succeeded|Failed) break;; esac
    sleep 1
done
recoveries=$("${G[@]}" status --json | jq -r '.job.recoveries // 0')

mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
echo "watcher_rss_anon_mb_peak: $(mb "$peak_anon")"
echo "watcher_rss_mb_peak: $(mb "$peak_rss")"
echo "watcher_rss_anon_mb_end: $(mb "$end_anon")"
echo "watcher_cpu_millicores_mean: $(( samples > 0 ? cpu_sum / samples : 0 ))"
echo "watcher_cpu_millicores_peak: $cpu_peak"
echo "watcher_recoveries: $recoveries"
