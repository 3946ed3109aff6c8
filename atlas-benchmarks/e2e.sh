#!/usr/bin/env bash
# What Atlas costs on a whole request, side by side in one run. Starts the embedded registry, two user-services
# (the providers) and, from the same jars, two callers of each kind: side A with Atlas's defaults, side B with
# --atlas.enabled=false (plain Spring Cloud LoadBalancer: round robin). For each target, wrk drives A and B in
# interleaved rounds (A B, then B A, ...) after a warm-up of both; each round records wrk's requests per second
# and latency percentiles, and the caller's own CPU time (process.cpu.time of its JVM, read from its management
# port before and after the round), so that wrk and the providers sharing the machine do not blur it.
# EndToEndReport prints the rounds and the Atlas/plain ratios as Markdown.
#
#   atlas-benchmarks/e2e.sh [TARGET...]    targets: rest-client rest-template web-client feign gateway (default: all)
#
# Environment: ROUNDS (4), SECS per round and side (15), WARM s of warm-up per side and target (90, in
# interleaved chunks of 30 s; the first target gets twice as much: the JIT of a Spring application on 2 busy cores
# takes minutes), CONNS (16), THREADS of wrk (2), JFR=1 records a JFR recording (settings=default: execution samples every 20 ms) of each
# side during the rounds of each target, and JfrProfile prints where the CPU went, B_ARGS (--atlas.enabled=false: what makes side B), A_ARGS (none),
# ORDER_JAR_B / GATEWAY_JAR_B (side B from another build, e.g. to compare two versions of Atlas with B_ARGS=" "),
# OUT (atlas-benchmarks/target/e2e), SKIP_BUILD=1 (use the jars already built). Needs bash 4.4+, wrk, curl, python3
# (free ports) and, with JFR=1, jcmd; builds the samples with ./mvnw.
# Run it on an otherwise idle machine; with the defaults it takes about 8 minutes for the first
# target and 5 for each other.
set -euo pipefail

cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-4}; SECS=${SECS:-15}; WARM=${WARM:-90}; CONNS=${CONNS:-16}; THREADS=${THREADS:-2}
OUT=${OUT:-atlas-benchmarks/target/e2e}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
TARGETS=("$@"); [[ ${#TARGETS[@]} -gt 0 ]] || TARGETS=(rest-client rest-template web-client feign gateway)
for t in "${TARGETS[@]}"; do
  case $t in rest-client|rest-template|web-client|feign|gateway) ;; *) echo "unknown target: $t" >&2; exit 2 ;; esac
done
command -v wrk >/dev/null || { echo "wrk is needed (Debian/Ubuntu: apt-get install wrk)" >&2; exit 2; }
[[ "${JFR:-0}" != 1 ]] || command -v jcmd >/dev/null || { echo "JFR=1 needs jcmd (a JDK)" >&2; exit 2; }

if [[ -z "${SKIP_BUILD:-}" ]]; then
  echo ">> building the samples and the benchmarks (./mvnw -B -q package -DskipTests)" >&2
  ./mvnw -B -q package -DskipTests >&2
fi
rm -rf "$OUT"; mkdir -p "$OUT/jars" "$OUT/rounds" "$OUT/logs"
exec_jar() { ls "$1"/target/"$1"-*-exec.jar | head -1; }
# Run from copies, so that a build in this tree cannot change a jar under a running process.
for m in sample-registry sample-user-service sample-order-service sample-gateway; do cp "$(exec_jar $m)" "$OUT/jars/$m.jar"; done
cp "${ORDER_JAR_B:-$OUT/jars/sample-order-service.jar}" "$OUT/jars/order-b.jar"
cp "${GATEWAY_JAR_B:-$OUT/jars/sample-gateway.jar}" "$OUT/jars/gateway-b.jar"
source atlas-benchmarks/stage-classpath.sh
report_cp=$(stage_classpath "$PWD" "$OUT/report")

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 1 120); do curl -fs -o /dev/null "$1" && return 0; sleep 1; done; echo "not up: $1" >&2; return 1; }
JOPTS=(-Xms256m -Xmx512m -XX:+UseParallelGC)
start() { # name jar args...
  local name=$1 jar=$2 jfr=(); shift 2
  # With JFR=1 the callers run with JFR from the start (a small rolling recording, never written out), so that
  # the recording of the rounds does not make the JVM re-instrument and recompile its I/O under load.
  [[ "${JFR:-0}" == 1 && $name != user* ]] && jfr=(-XX:StartFlightRecording=name=boot,settings=default,maxsize=5m)
  ZK_ADDR=127.0.0.1:$ZK java "${JOPTS[@]}" "${jfr[@]}" -jar "$jar" "$@" > "$OUT/logs/$name.log" 2>&1 &
  PIDS+=($!); eval "PID_$name=$!"
}

ZK=$(free_port)
java "${JOPTS[@]}" -jar "$OUT/jars/sample-registry.jar" --port="$ZK" > "$OUT/logs/registry.log" 2>&1 & PIDS+=($!)
sleep 3
# the callers' CPU time is read from their actuator (management port only)
EXPOSE=--management.endpoints.web.exposure.include=health,metrics
declare -A PORT MGMT
for n in user1 user2 orderA orderB gatewayA gatewayB; do PORT[$n]=$(free_port); MGMT[$n]=$(free_port); done
for n in user1 user2; do start $n "$OUT/jars/sample-user-service.jar" --server.port=${PORT[$n]} --management.server.port=${MGMT[$n]}; done
# shellcheck disable=SC2086
start orderA "$OUT/jars/sample-order-service.jar" --server.port=${PORT[orderA]} --management.server.port=${MGMT[orderA]} $EXPOSE ${A_ARGS:-}
# shellcheck disable=SC2086
start orderB "$OUT/jars/order-b.jar" --server.port=${PORT[orderB]} --management.server.port=${MGMT[orderB]} $EXPOSE ${B_ARGS:---atlas.enabled=false}
callers=(user1 user2 orderA orderB)
if [[ " ${TARGETS[*]} " == *" gateway "* ]]; then
callers+=(gatewayA gatewayB)
# shellcheck disable=SC2086
start gatewayA "$OUT/jars/sample-gateway.jar" --server.port=${PORT[gatewayA]} --management.server.port=${MGMT[gatewayA]} $EXPOSE ${A_ARGS:-}
# shellcheck disable=SC2086
start gatewayB "$OUT/jars/gateway-b.jar" --server.port=${PORT[gatewayB]} --management.server.port=${MGMT[gatewayB]} $EXPOSE ${B_ARGS:---atlas.enabled=false}
fi
for n in "${callers[@]}"; do wait_up "http://127.0.0.1:${MGMT[$n]}/actuator/health"; done

url() { # target side
  local caller=order$2; [[ $1 == gateway ]] && caller=gateway$2
  if [[ $1 == gateway ]]; then echo "http://127.0.0.1:${PORT[$caller]}/api/users/7"
  else echo "http://127.0.0.1:${PORT[$caller]}/orders/7?client=$1"; fi
}
caller_of() { [[ $1 == gateway ]] && echo gateway$2 || echo order$2; }
cpu_ns() { # process.cpu.time of a caller's JVM (OperatingSystemMXBean.getProcessCpuTime, through Micrometer), ns
  curl -fs "http://127.0.0.1:${MGMT[$1]}/actuator/metrics/process.cpu.time" | python3 -c '
import json, sys
m = json.load(sys.stdin); v = m["measurements"][0]["value"]; u = m.get("baseUnit") or "seconds"
print(round(v * {"seconds": 1e9, "milliseconds": 1e6, "microseconds": 1e3}.get(u, 1)))'
}
# Both providers must answer before anything is measured (the registry may take a moment to list them).
for t in "${TARGETS[@]}"; do for s in A B; do
  for _ in $(seq 1 30); do curl -fs -o /dev/null "$(url "$t" $s)" && break; sleep 1; done
  curl -fsS -o /dev/null "$(url "$t" $s)"
done; done

{
  echo "# e2e: ${TARGETS[*]}; rounds=$ROUNDS secs=$SECS warm=$WARM conns=$CONNS threads=$THREADS"
  echo "# A: Atlas ${A_ARGS:-(defaults)}; B: ${B_ARGS:---atlas.enabled=false}${ORDER_JAR_B:+ ($ORDER_JAR_B)}"
  echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# $(java -version 2>&1 | head -1)"
} > "$OUT/rounds/run.txt"
first=${TARGETS[0]}
for t in "${TARGETS[@]}"; do
  warm=$WARM; [[ $t == "$first" ]] && warm=$((2 * WARM))
  echo ">> $t: warm-up ${warm}s per side" >&2
  for (( done_s = 0; done_s < warm; done_s += 30 )); do chunk=$(( warm - done_s < 30 ? warm - done_s : 30 ))
    for s in A B; do wrk -t"$THREADS" -c"$CONNS" -d${chunk}s "$(url "$t" $s)" > /dev/null; done
  done
  if [[ "${JFR:-0}" == 1 ]]; then
    for s in A B; do c=$(caller_of "$t" $s); pid_var=PID_$c
      jcmd "${!pid_var}" JFR.start name=e2e settings=default filename="$OUT/$t-$s.jfr" > /dev/null
    done
  fi
  for r in $(seq 1 "$ROUNDS"); do
    order="A B"; (( r % 2 == 0 )) && order="B A"
    for s in $order; do
      c=$(caller_of "$t" $s); f="$OUT/rounds/$t.r$r.$s"
      before=$(cpu_ns "$c")
      wrk -t"$THREADS" -c"$CONNS" -d"${SECS}"s --latency "$(url "$t" $s)" > "$f.wrk"
      after=$(cpu_ns "$c")
      echo "$before $after" > "$f.cpu"
      echo "   round $r $s: $(grep 'Requests/sec' "$f.wrk")" >&2
    done
  done
  if [[ "${JFR:-0}" == 1 ]]; then
    for s in A B; do c=$(caller_of "$t" $s); pid_var=PID_$c; jcmd "${!pid_var}" JFR.stop name=e2e > /dev/null; done
    echo ">> JFR recordings: $OUT/$t-A.jfr (Atlas), $OUT/$t-B.jfr (plain)" >&2
  fi
done
java -cp "$report_cp" dev.atlas.benchmarks.e2e.EndToEndReport "$OUT/rounds" | tee "$OUT/report.md"
if [[ "${JFR:-0}" == 1 ]]; then
  for t in "${TARGETS[@]}"; do
    echo; echo "Profile (JFR) of $t, by component:"; echo
    java -cp "$report_cp" dev.atlas.benchmarks.e2e.JfrProfile "$OUT/rounds" "$t" "$OUT/$t-A.jfr" "$OUT/$t-B.jfr"
  done | tee "$OUT/profile.md"
fi
