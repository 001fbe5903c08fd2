#!/usr/bin/env bash
# Throughput and memory of fake-redis against redis-server, on this machine.
#
# Not a test: numbers depend on the machine. Each benchmark runs against
# redis-server and fake-redis alternately (same machine, same moment),
# ROUNDS times; the ratio printed is the median of the rounds' ratios,
# with their minimum and maximum, so one noisy round does not decide it.
# With two or more cores the servers share the first and redis-benchmark
# runs on the second (PIN=0 turns that off), so the client never competes
# with the server it measures. Each line also gives each server's CPU time
# per request (from /proc, user + system): without pipelining neither
# server keeps its core busy, redis-benchmark's round trips set the pace
# and the throughput ratio sits near 1.0 within the machine's noise, while
# the CPU time per request says which server does less work for the same
# requests, and the last column how much of each run redis-benchmark kept
# its own core busy (1.00: the client is the bottleneck, and the ratio
# measures the client more than the servers). Usage, from the workspace
# root:
#
#   cargo build --release -p fake-redis
#   bash fake-redis/bench/compare.sh                 # throughput and RSS
#   N=20000 ROUNDS=3 bash fake-redis/bench/compare.sh  # quicker
#   PIPELINES=1 ROUNDS=9 bash fake-redis/bench/compare.sh  # unpipelined only
#   THREADS=3 bash fake-redis/bench/compare.sh       # a client of 3 threads (4+ cores)
#
# Needs redis-server and redis-benchmark (apt-get install redis-server).
set -euo pipefail

N=${N:-100000}
ROUNDS=${ROUNDS:-5}
PIPELINES=${PIPELINES:-1 16}
PIN=${PIN:-1}
THREADS=${THREADS:-1}
KEYS=${KEYS:-1000000}
BIN=${BIN:-target/release/fake-redis}
REAL_PORT=${REAL_PORT:-16379}
FAKE_PORT=${FAKE_PORT:-16380}

command -v redis-server >/dev/null || { echo "redis-server not installed" >&2; exit 1; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not installed" >&2; exit 1; }
[ -x "$BIN" ] || { echo "build first: cargo build --release -p fake-redis" >&2; exit 1; }

pids=()
OUT=$(mktemp)
# Waits for the servers to exit, so a run started right after this one
# does not find their ports still taken (or be refused by a dying server).
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "$OUT"
}
trap cleanup EXIT

# The servers on the first core, redis-benchmark on the second.
# With more cores, redis-benchmark gets all but the first and THREADS
# threads (redis-benchmark --threads), so a client that saturates one core
# (see the last column) need not set the pace.
SERVER_CPU=() CLIENT_CPU=() CLIENT_ARGS=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  SERVER_CPU=(taskset -c 0) CLIENT_CPU=(taskset -c "1-$(($(nproc) - 1))")
fi
if [ "$THREADS" -gt 1 ]; then CLIENT_ARGS=(--threads "$THREADS"); fi

start_servers() {
  "${SERVER_CPU[@]}" redis-server --port "$REAL_PORT" --save "" --appendonly no --bind 127.0.0.1 >/dev/null &
  pids+=($!); REAL_PID=$!
  "${SERVER_CPU[@]}" "$BIN" --port "$FAKE_PORT" 2>/dev/null &
  pids+=($!); FAKE_PID=$!
  for port in "$REAL_PORT" "$FAKE_PORT"; do
    for _ in $(seq 50); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.1; done
  done
}

rss_mib() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

HZ=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # user + system

# One redis-benchmark run against the server on port $1 (process $2):
# requests per second, the server's CPU time per request in µs, and the
# share of the run redis-benchmark kept its own core busy (near 1: the
# client, not the server, sets the pace).
run_one() { # port, pid, extra args...
  local port=$1 pid=$2; shift 2
  local before after rps timing
  before=$(cpu_ticks "$pid")
  timing=$( { TIMEFORMAT='%R %U %S'; time "${CLIENT_CPU[@]}" redis-benchmark -p "$port" -c 50 -n "$N" -q "${CLIENT_ARGS[@]}" "$@" >"$OUT" 2>/dev/null; } 2>&1 )
  after=$(cpu_ticks "$pid")
  rps=$(tr '\r' '\n' <"$OUT" | grep -oE '[0-9.]+ requests per second' | tail -1 | cut -d' ' -f1)
  echo "$rps $(echo "($after - $before) * 1000000 / $HZ / $N" | bc -l) $(echo "$timing" | awk '{ print ($2 + $3) / $1 }')"
}

start_servers
RENEW=$(cat <<'LUA'
if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; return 0;
LUA
)
for port in "$REAL_PORT" "$FAKE_PORT"; do
  SHA=$(redis-cli -p "$port" SCRIPT LOAD "$RENEW")
  redis-cli -p "$port" HSET lock uuid:1 1 >/dev/null
done

# Median, minimum and maximum of the numbers on stdin.
stats() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'; }

# One test, ROUNDS times each way, alternately: a line of medians (requests
# per second, server CPU µs per request) and the ratio's median (min-max).
measure() { # label, redis-benchmark args...
  local label=$1; shift
  local reals=() fakes=() ratios=() real_cpu=() fake_cpu=() busy=() real fake rc fc rb fb
  for _ in $(seq "$ROUNDS"); do
    read -r real rc rb < <(run_one "$REAL_PORT" "$REAL_PID" "$@")
    read -r fake fc fb < <(run_one "$FAKE_PORT" "$FAKE_PID" "$@")
    reals+=("$real") fakes+=("$fake") real_cpu+=("$rc") fake_cpu+=("$fc") busy+=("$rb" "$fb")
    ratios+=("$(echo "$fake / $real" | bc -l)")
  done
  read -r rm _ _ < <(printf '%s\n' "${reals[@]}" | stats)
  read -r fm _ _ < <(printf '%s\n' "${fakes[@]}" | stats)
  read -r rcm _ _ < <(printf '%s\n' "${real_cpu[@]}" | stats)
  read -r fcm _ _ < <(printf '%s\n' "${fake_cpu[@]}" | stats)
  read -r bm _ _ < <(printf '%s\n' "${busy[@]}" | stats)
  read -r med lo hi < <(printf '%s\n' "${ratios[@]}" | stats)
  printf '%-22s %12.0f %12.0f %7s %-12s %5.2f %5.2f %6s\n' "$label" "$rm" "$fm" "$med" "($lo-$hi)" "$rcm" "$fcm" "$bm"
}

echo "ROUNDS=$ROUNDS N=$N; requests per second (medians), fake/real ratio, median (min-max),"
echo "each server's CPU time per request in µs (medians; user + system, ${HZ} Hz ticks), and"
echo "the share of each run redis-benchmark kept its core busy (median over both servers' runs)"
printf '%-22s %12s %12s %7s %-12s %5s %5s %6s\n' test redis-server fake-redis ratio '' 'cpu-r' 'cpu-f' client
for pipeline in $PIPELINES; do
  for t in ping_mbulk set get hset; do
    measure "$t -P $pipeline" -t "$t" -P "$pipeline"
  done
  measure "evalsha-renew -P $pipeline" -P "$pipeline" EVALSHA "$SHA" 1 lock 30000 uuid:1
done

echo
echo "RSS after redis-benchmark -t set -r $KEYS -n $((KEYS * 2)) -P 16:"
for port in "$REAL_PORT" "$FAKE_PORT"; do
  redis-cli -p "$port" FLUSHALL >/dev/null
  "${CLIENT_CPU[@]}" redis-benchmark -p "$port" -t set -r "$KEYS" -n $((KEYS * 2)) -P 16 -q >/dev/null 2>&1
done
real_keys=$(redis-cli -p "$REAL_PORT" DBSIZE); fake_keys=$(redis-cli -p "$FAKE_PORT" DBSIZE)
printf 'redis-server: %s keys, %s MiB\n' "$real_keys" "$(rss_mib "$REAL_PID")"
printf 'fake-redis:   %s keys, %s MiB\n' "$fake_keys" "$(rss_mib "$FAKE_PID")"
