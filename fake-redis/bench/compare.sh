#!/usr/bin/env bash
# Throughput and memory of fake-redis against redis-server, on this machine.
#
# Not a test: numbers depend on the machine. Each benchmark runs against
# redis-server and fake-redis alternately (same machine, same moment), so
# their ratio is what to read. Usage, from the workspace root:
#
#   cargo build --release -p fake-redis
#   bash fake-redis/bench/compare.sh            # throughput and RSS
#   N=20000 bash fake-redis/bench/compare.sh    # quicker
#
# Needs redis-server and redis-benchmark (apt-get install redis-server).
set -euo pipefail

N=${N:-100000}
KEYS=${KEYS:-1000000}
BIN=${BIN:-target/release/fake-redis}
REAL_PORT=${REAL_PORT:-16379}
FAKE_PORT=${FAKE_PORT:-16380}

command -v redis-server >/dev/null || { echo "redis-server not installed" >&2; exit 1; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not installed" >&2; exit 1; }
[ -x "$BIN" ] || { echo "build first: cargo build --release -p fake-redis" >&2; exit 1; }

pids=()
# Waits for the servers to exit, so a run started right after this one
# does not find their ports still taken (or be refused by a dying server).
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

start_servers() {
  redis-server --port "$REAL_PORT" --save "" --appendonly no --bind 127.0.0.1 >/dev/null &
  pids+=($!); REAL_PID=$!
  "$BIN" --port "$FAKE_PORT" 2>/dev/null &
  pids+=($!); FAKE_PID=$!
  for port in "$REAL_PORT" "$FAKE_PORT"; do
    for _ in $(seq 50); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.1; done
  done
}

rss_mib() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

rps() { # port, extra args...
  local port=$1; shift
  redis-benchmark -p "$port" -c 50 -n "$N" -q "$@" 2>/dev/null | tr '\r' '\n' | grep -oE '[0-9.]+ requests per second' | tail -1 | cut -d' ' -f1
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

printf '%-22s %12s %12s %7s\n' test redis-server fake-redis ratio
for pipeline in 1 16; do
  for t in ping_mbulk set get hset; do
    real=$(rps "$REAL_PORT" -t "$t" -P "$pipeline")
    fake=$(rps "$FAKE_PORT" -t "$t" -P "$pipeline")
    printf '%-22s %12s %12s %7.2f\n' "$t -P $pipeline" "$real" "$fake" "$(echo "$fake / $real" | bc -l)"
  done
  real=$(rps "$REAL_PORT" -P "$pipeline" EVALSHA "$SHA" 1 lock 30000 uuid:1)
  fake=$(rps "$FAKE_PORT" -P "$pipeline" EVALSHA "$SHA" 1 lock 30000 uuid:1)
  printf '%-22s %12s %12s %7.2f\n' "evalsha-renew -P $pipeline" "$real" "$fake" "$(echo "$fake / $real" | bc -l)"
done

echo
echo "RSS after redis-benchmark -t set -r $KEYS -n $((KEYS * 2)) -P 16:"
for port in "$REAL_PORT" "$FAKE_PORT"; do
  redis-cli -p "$port" FLUSHALL >/dev/null
  redis-benchmark -p "$port" -t set -r "$KEYS" -n $((KEYS * 2)) -P 16 -q >/dev/null 2>&1
done
real_keys=$(redis-cli -p "$REAL_PORT" DBSIZE); fake_keys=$(redis-cli -p "$FAKE_PORT" DBSIZE)
printf 'redis-server: %s keys, %s MiB\n' "$real_keys" "$(rss_mib "$REAL_PID")"
printf 'fake-redis:   %s keys, %s MiB\n' "$fake_keys" "$(rss_mib "$FAKE_PID")"
