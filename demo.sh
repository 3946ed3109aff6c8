#!/usr/bin/env bash
# Atlas demo: weighted load balancing and gray-tag routing across a real (embedded) registry, on one
# machine.
#
#   ./demo.sh              build, start everything, print the reports, stop everything
#   ./demo.sh --no-build   reuse the jars already in */target
#   ./demo.sh --keep       leave the services running after the reports, until Ctrl-C
#   ./demo.sh --prometheus  also run a real Prometheus (Debian's prometheus package, and jq: installed with
#                          apt-get, as root or through sudo, when missing) that
#                          scrapes the first three order-services and the gateway every second with Atlas's
#                          alert rules (docs/prometheus/, checked and unit-tested with promtool first); the
#                          crash scenario must fire AtlasInstanceEjected (order-service ejecting the killed
#                          instance), and right after it every query of the Grafana dashboard
#                          (docs/grafana/atlas-dashboard.json) must return series (report "prometheus")
#   ./demo.sh --registry nacos   the same scenarios on a Nacos server at NACOS_ADDR (host:port, e.g.
#                          NACOS_ADDR=127.0.0.1:8848 ./demo.sh --registry nacos), which must be running
#                          (the services register in its public namespace, in a group of the run's own;
#                          its gRPC port is port + 1000)
#   ./demo.sh --registry eureka  the same scenarios on a real Eureka server that the demo starts
#                          (sample-eureka-server, Spring Cloud Netflix's; the samples' 'eureka' profile:
#                          clients fetch every 2 s, the server answers from its read-write cache)
#
# It starts an in-process ZooKeeper (or uses the Nacos server), five user-service instances — three tagged v1 with weights 1, 2
# and 3, two tagged v2 (the canary version) — and three order-services (all with
# atlas.gray.baseline-tags=v1; the second also with a 10 % canary,
# atlas.services.user-service.gray.weights.v2=10; the third, order-service-rules, reads its routing
# rules from the file ATLAS_RULES_FILE=.demo/rules.properties, re-read on POST /actuator/refresh).
# Then:
#  1. weights: CALLS untagged calls through each @LoadBalanced client (RestTemplate, RestClient,
#     WebClient, OpenFeign); each v1 instance's share must match its weight's share of the v1 lane,
#     and the v2 instances, outside the lane untagged traffic may reach, must get nothing;
#  2. gray: GRAY_CALLS calls to order-service's GET /chain/{id} — hop 1: Feign from an @Async
#     method to user-service; hop 2: that user-service instance calls user-service again through
#     a WebClient after moving to boundedElastic — without header (both hops on v1), with
#     X-Service-Version: v2 (both hops on v2) and with v3, a tag nobody runs (fallback to v1); then
#     CANARY_CALLS untagged calls to the canary order-service (about 10 % on v2);
#  2b. gateway: the sample gateway (Spring Cloud Gateway, Atlas as its balancer; its lane rules and a
#     sticky 10 % canary of user-service given on its command line, GATEWAY_ARGS) in front of the
#     same fleet: one row per way of choosing a lane at the edge, through GET /api/users/{id}:
#     GATEWAY_SHARE_CALLS untagged calls (about 10 % on v2, random per call), then GATEWAY_CALLS calls
#     each with X-Service-Version: v2 and with the lane rules X-User-Group: beta and cookie canary=1
#     (all on v2); GATEWAY_USERS distinct X-User-Id values, each sent twice (about 10 % of the users on
#     v2, each user always in one lane); and GATEWAY_CALLS GET /api/orders/chain/{id} with
#     X-User-Group: beta (three hops: gateway → order-service → user-service → user-service; both
#     user-service hops on v2, order-service having no v2);
#  3. canary progression: while untagged traffic flows through order-service-rules (a closed loop of
#     bursts of 200 GET /traffic calls, CONCURRENCY at a time, RestTemplate), the demo steps
#     atlas.services.user-service.gray.weights.v2 through CANARY_STEPS (0 10 50 100 0) %: it rewrites
#     .demo/rules.properties, POSTs /actuator/refresh on order-service-rules' management port (the
#     answer lists the changed keys), then measures v2's share of the next CANARY_STEP_CALLS untagged
#     calls (GET /orders/{id} through RestClient, with /gray/report); one line per step (target,
#     refresh status and changed keys, observed share, PASS/FAIL); PASS when every refresh answers 200
#     and lists the key whenever its value changed, every share is within CANARY_STEP_TOLERANCE points
#     of its target (or 4 standard deviations of the share of CANARY_STEP_CALLS random draws, when
#     more: 4.5 points at 50 % of 2,000) and no call failed, in the steps or in the background traffic;
#  4. rolling restart: a closed loop of ROLL_CONCURRENCY (50) concurrent GETs runs through
#     order-service (bursts of ROLL_BURST calls to GET /traffic, back to back) while each v1
#     user-service in turn gets SIGTERM (Atlas deregisters, drains ROLL_DRAIN, stops) and a
#     replacement starts, while a second closed loop of ROLL_CONCURRENCY concurrent GETs goes through
#     the gateway (GET /api/users/{id}, bursts of ROLL_BURST, curl --parallel); every request of both
#     must succeed (reported separately);
#  5. crash: the same closed loop while the v1 user-service with the largest weight gets SIGKILL (no
#     deregistration: the registry keeps listing it until it notices, e.g. when its ZooKeeper session
#     expires) and a replacement
#     starts on the same port with the same instance id; order-service (started with
#     --atlas.outlier.base-ejection-time=CRASH_EJECTION s and --atlas.outlier.probe.interval=CRASH_PROBE s)
#     must eject it after 5 failures in a row; the report gives requests sent and failed, attempts on
#     the dead instance (its "picks" on order-service's /actuator/atlas/user-service) before and after
#     the ejection, the time to eject (kill → ejection) and the time to return (restart → back among
#     the candidates, and → picked again); PASS when no request failed, the ejection came within
#     CRASH_EJECT_LIMIT s of the kill, no attempt went to the instance while it was ejected, and it
#     was picked again after the restart;
#  6. affinity: four untagged user-services in clusters a, a, b, b and an order-service in cluster a
#     (--sample.cluster=a, --atlas.affinity.mode=threshold): AFFINITY_CALLS calls all go to a; after both a instances get SIGTERM
#     they spill over to b, counted in atlas.affinity.spillover (read from /actuator/prometheus);
#  7. warmup: an order-service with --atlas.warmup.duration=WARMUP (20s) sees the two b instances;
#     a new instance starts and its share is printed every few seconds as it ramps up (no verdict);
#  8. load-aware strategies: a fourth untagged user-service starts with --sample.delay=STRAT_DELAY
#     (200ms: it answers every call that much later) beside the three of the warmup scenario, and three
#     order-services, each with --atlas.services.user-service.loadbalancer.strategy= weighted-random,
#     least-request or peak-ewma (warmup off); each sends STRAT_WARMUP calls (not counted), then
#     STRAT_CALLS calls from STRAT_CONCURRENCY threads (RestClient); a table gives each strategy's
#     share of the slow instance; PASS when no call failed, least-request's share is under 20 % and
#     peak-ewma's under 10 % (the thresholds of LoadAwareStrategiesIT; weighted-random's, about 1 in
#     4, is the reference);
#  9. reported load: every user-service and order-service so far is stopped; three fresh user-services
#     report their load (atlas.load-report.enabled, on in the sample) and burn CPU per user served,
#     5 ms, 5 ms and 10 ms (--sample.cpu-cost=1x, 1x, 2x: the last has about half the capacity); one
#     order-service with weighted-round-robin (blackout WRR_BLACKOUT) and one with smooth-round-robin
#     each send WRR_WARMUP calls (not counted), then WRR_CALLS from WRR_CONCURRENCY threads; PASS when
#     no call failed and weighted-round-robin gives the 2x instance 20 % ± WRR_TOLERANCE points (its
#     share of the capacity), round robin's third being the reference;
# 10. logs: the services are stopped (unless --keep), then every WARN and ERROR line the samples logged
#     (and the embedded ZooKeeper's) is counted by the scenario that provokes it on purpose (a tag no
#     instance runs, a lane the gateway's next hop does not have, the affinity scenario's spill-over);
#     PASS when no other WARN or ERROR line (nor a JVM warning) appeared, every log was in the expected
#     format, every service stopped on SIGTERM within 20 s, and no report left an error file.
# Exit status: 0 when every report PASSes, 1 when a report FAILs or a service does not start, 2 on a
# usage or environment problem. Every process it starts is stopped on exit, failure or Ctrl-C.
# Logs go to .demo/.
#
# Environment: CALLS (3000), CONCURRENCY (4), TOLERANCE in percentage points (3), GRAY_CALLS (300),
# CANARY_CALLS (3000), CANARY_TOLERANCE in percentage points (2), CANARY_STEPS (the canary progression's
# targets in percent, "0 10 50 100 0"), CANARY_STEP_CALLS (2000), CANARY_STEP_TOLERANCE in percentage
# points (3), START_TIMEOUT in seconds (240),
# ROLL_CONCURRENCY (50), ROLL_BURST (1000), ROLL_DRAIN (2s; 5s with --registry eureka), CRASH_EJECTION in s (10), CRASH_PROBE in s
# (1), CRASH_EJECT_LIMIT in s (2), GATEWAY_CALLS (200), GATEWAY_SHARE_CALLS (1000), GATEWAY_USERS (500), GATEWAY_ARGS (extra arguments
# of the gateway), AFFINITY_CALLS (1000), WARMUP in s (20), DEMO_JAVA_OPTS (JVM options
# for every process), ORDER_ARGS (extra arguments of the first order-service; ORDER_ARGS=--atlas.enabled=false
# shows Spring's round robin, and the reports FAIL; ORDER_ARGS=--atlas.outlier.enabled=false leaves the
# crashed instance in rotation, and the crash report FAILs), STRAT_CALLS (1000), STRAT_CONCURRENCY (20),
# STRAT_WARMUP (200), STRAT_DELAY (200ms), WRR_CALLS (3000), WRR_WARMUP (4000), WRR_CONCURRENCY (8),
# WRR_BLACKOUT (5s), WRR_TOLERANCE in percentage points (5), STRAT_ARGS (extra arguments of the three strategy
# order-services; STRAT_ARGS=--atlas.enabled=false gives all three Spring's round robin, and the
# strategies report FAILs).
set -Eeuo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$(pwd)
DEMO_DIR="$ROOT/.demo"
VERSION=0.1.0-SNAPSHOT
CALLS=${CALLS:-3000}
CONCURRENCY=${CONCURRENCY:-4}
TOLERANCE=${TOLERANCE:-3}
GRAY_CALLS=${GRAY_CALLS:-300}
CANARY_CALLS=${CANARY_CALLS:-3000}
CANARY_PERCENT=10
CANARY_TOLERANCE=${CANARY_TOLERANCE:-2}
CANARY_STEPS=${CANARY_STEPS:-0 10 50 100 0}
CANARY_STEP_CALLS=${CANARY_STEP_CALLS:-2000}
CANARY_STEP_TOLERANCE=${CANARY_STEP_TOLERANCE:-3}
# The canary progression's rules file (order-service-rules' ATLAS_RULES_FILE) and the key it steps
RULES_FILE="$DEMO_DIR/rules.properties"
CANARY_KEY=atlas.services.user-service.gray.weights.v2
START_TIMEOUT=${START_TIMEOUT:-240}
ROLL_CONCURRENCY=${ROLL_CONCURRENCY:-50}
ROLL_BURST=${ROLL_BURST:-1000}
# ROLL_DRAIN: set below once the registry is known (2s; 5s on Eureka, whose callers fetch every 2 s)
ROLL_DRAIN=${ROLL_DRAIN:-}
AFFINITY_CALLS=${AFFINITY_CALLS:-1000}
WARMUP=${WARMUP:-20}
CRASH_EJECTION=${CRASH_EJECTION:-10}
CRASH_PROBE=${CRASH_PROBE:-1}
CRASH_EJECT_LIMIT=${CRASH_EJECT_LIMIT:-2}
GATEWAY_CALLS=${GATEWAY_CALLS:-200}
GATEWAY_SHARE_CALLS=${GATEWAY_SHARE_CALLS:-1000}
GATEWAY_USERS=${GATEWAY_USERS:-500}
# C1 only and the serial collector: eight JVMs start faster on a small machine.
DEMO_JAVA_OPTS=${DEMO_JAVA_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m}
ORDER_ARGS=${ORDER_ARGS:-}
STRAT_CALLS=${STRAT_CALLS:-1000}
STRAT_CONCURRENCY=${STRAT_CONCURRENCY:-20}
STRAT_WARMUP=${STRAT_WARMUP:-200}
STRAT_DELAY=${STRAT_DELAY:-200ms}
STRAT_ARGS=${STRAT_ARGS:-}
WRR_CALLS=${WRR_CALLS:-3000}
WRR_WARMUP=${WRR_WARMUP:-4000}
WRR_CONCURRENCY=${WRR_CONCURRENCY:-8}
WRR_BLACKOUT=${WRR_BLACKOUT:-5s}
WRR_TOLERANCE=${WRR_TOLERANCE:-5}
# The strategies compared in the last scenario, and the share of the slow instance each must stay
# under, in percent (empty: printed, no verdict)
STRATEGIES=(weighted-random least-request peak-ewma)
STRAT_LIMITS=("" 20 10)
CLIENTS=(rest-template rest-client web-client feign)
# user-service instances: tag and weight of each
USER_TAGS=(v1 v1 v1 v2 v2)
USER_WEIGHTS=(1 2 3 1 1)
# Every order-service and user-service treats v1 as the baseline (what untagged calls reach). The
# order-services skip Atlas's drain on shutdown (no caller of theirs is left when the demo stops:
# NO_DRAIN, below); the user-services drain ROLL_DRAIN, as they must in the rolling restart.
FLEET_ARGS=(--atlas.gray.baseline-tags=v1) # the order-services get --atlas.lifecycle.drain=NO_DRAIN below
USER_ARGS=(--atlas.gray.baseline-tags=v1) # and --atlas.lifecycle.drain=ROLL_DRAIN, below
# The weight tables compare shares with full weights: warmup (on by default for 60 s after an
# instance registers) would make the freshly started instances' shares follow their age. Warmup
# has its own tests and its own scenario (the warmup ramp).
ORDER_COMMON_ARGS=("${FLEET_ARGS[@]}" --atlas.warmup.enabled=false)
# The gateway: v1 is the baseline, as everywhere; two lane rules (a header and a cookie send a request
# to v2), and a sticky 10 % canary of user-service keyed by X-User-Id (about 10 % of the users on v2,
# each always in the same lane); warmup off and no drain, as for the order-services.
GATEWAY_LANE_ARGS=(--atlas.gray.baseline-tags=v1 --atlas.warmup.enabled=false
  --atlas.gray.rules[0].tag=v2 --atlas.gray.rules[0].header=X-User-Group --atlas.gray.rules[0].equals=beta
  --atlas.gray.rules[1].tag=v2 --atlas.gray.rules[1].cookie=canary --atlas.gray.rules[1].equals=1
  --atlas.services.user-service.gray.weights.v2="$CANARY_PERCENT"
  --atlas.services.user-service.gray.hash-key-header=X-User-Id)
GATEWAY_ARGS=${GATEWAY_ARGS:-}
# The first order-service (the one the crash scenario watches) ejects a failing instance for
# CRASH_EJECTION s (Atlas's default: 30 s) and probes it every CRASH_PROBE s (default: 5 s), so that
# the crashed instance's return fits in a short demo. The consecutive-failure thresholds stay at
# their defaults (5).
ORDER_OUTLIER_ARGS=(--atlas.outlier.base-ejection-time="${CRASH_EJECTION}s" --atlas.outlier.probe.interval="${CRASH_PROBE}s")

REGISTRY_JAR="$ROOT/sample-registry/target/sample-registry-$VERSION-exec.jar"
EUREKA_JAR="$ROOT/sample-eureka-server/target/sample-eureka-server-$VERSION-exec.jar"
USER_JAR="$ROOT/sample-user-service/target/sample-user-service-$VERSION-exec.jar"
ORDER_JAR="$ROOT/sample-order-service/target/sample-order-service-$VERSION-exec.jar"
GATEWAY_JAR="$ROOT/sample-gateway/target/sample-gateway-$VERSION-exec.jar"

build=true
keep=false
prometheus=false
registry=zookeeper
expect_registry=false
for arg in "$@"; do
  if $expect_registry; then registry=$arg; expect_registry=false; continue; fi
  case "$arg" in
    --no-build) build=false ;;
    --keep) keep=true ;;
    --prometheus) prometheus=true ;;
    --registry) expect_registry=true ;;
    --registry=*) registry=${arg#--registry=} ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "demo: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { printf '%s\n' "demo: $*"; }
die() { printf '%s\n' "demo: $1" >&2; exit "${2:-1}"; }
$expect_registry && die "--registry needs a value: zookeeper, nacos or eureka" 2
case "$registry" in
  zookeeper|eureka) ;;
  nacos) [[ "${NACOS_ADDR:-}" =~ ^[^:]+:[1-9][0-9]*$ ]] \
           || die "--registry nacos needs NACOS_ADDR=host:port of a running Nacos server (e.g. NACOS_ADDR=127.0.0.1:8848)" 2 ;;
  *) die "unknown registry '$registry' (allowed: zookeeper, nacos, eureka)" 2 ;;
esac
# how the registry notices an instance killed without deregistering, in the crash report's words
case "$registry" in
  zookeeper) DROP_REASON="when its ZooKeeper session expires" ;;
  nacos) DROP_REASON="when its gRPC connection to Nacos closes" ;;
  eureka) DROP_REASON="when its lease expires and Eureka evicts it" ;;
esac
if [[ -z "$ROLL_DRAIN" ]]; then
  # Eureka's callers notice a deregistration at their next fetch (every 2 s in the 'eureka' profile)
  if [[ "$registry" == eureka ]]; then ROLL_DRAIN=5s; else ROLL_DRAIN=2s; fi
fi
USER_ARGS+=(--atlas.lifecycle.drain="$ROLL_DRAIN")
# The services no caller is left for when they stop skip the drain; on Eureka they drain one fetch
# interval (2 s in the 'eureka' profile), as Atlas asks at startup of a drain shorter than that.
if [[ "$registry" == eureka ]]; then NO_DRAIN=2s; else NO_DRAIN=0s; fi
ORDER_COMMON_ARGS+=(--atlas.lifecycle.drain="$NO_DRAIN")
GATEWAY_LANE_ARGS+=(--atlas.lifecycle.drain="$NO_DRAIN")
[[ -n "${CANARY_STEPS// /}" ]] || die "CANARY_STEPS is empty (e.g. CANARY_STEPS='0 10 50 100 0')" 2
for target in $CANARY_STEPS; do
  [[ "$target" =~ ^(0|[1-9][0-9]?|100)$ ]] \
    || die "CANARY_STEPS must be whole percentages from 0 to 100 (e.g. '0 10 50 100 0'), not '$target'" 2
done

# --- prerequisites -----------------------------------------------------------------------------
command -v java >/dev/null 2>&1 \
  || die "'java' was not found on PATH; install a JDK 17 or newer (e.g. apt-get install openjdk-17-jdk-headless)." 2
command -v curl >/dev/null 2>&1 \
  || die "'curl' was not found on PATH; install it (e.g. apt-get install curl)." 2
java_version=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
[[ "${java_version%%.*}" =~ ^[0-9]+$ && "${java_version%%.*}" -ge 17 ]] \
  || die "Java 17 or newer is required ('java' is version '${java_version:-unknown}')." 2

PROM_RULES="$ROOT/docs/prometheus/atlas-alerts.yml"
DASHBOARD="$ROOT/docs/grafana/atlas-dashboard.json"
if $prometheus; then
  # Debian's (and Ubuntu's) prometheus package brings prometheus and promtool; installed here when
  # missing, with apt-get as root or through sudo
  if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1 \
    || ! command -v jq >/dev/null 2>&1; then
    as_root=()
    [[ "$(id -u)" -eq 0 ]] || as_root=(sudo)
    if command -v apt-get >/dev/null 2>&1 && { ((${#as_root[@]} == 0)) || command -v sudo >/dev/null 2>&1; }; then
      say "installing Debian's prometheus and jq packages (${as_root[*]:+${as_root[*]} }apt-get install -y prometheus jq) ..."
      mkdir -p "$DEMO_DIR"
      { "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
          && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus jq; } \
        >"$DEMO_DIR/apt.log" 2>&1 || die "apt-get could not install prometheus and jq (see .demo/apt.log)" 2
    fi
  fi
  command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 \
    || die "--prometheus needs 'prometheus' and 'promtool' on PATH (Debian's prometheus package: apt-get install prometheus)." 2
  command -v jq >/dev/null 2>&1 || die "--prometheus needs 'jq' on PATH (apt-get install jq)." 2
  promtool check rules "$PROM_RULES" >/dev/null || die "promtool check rules $PROM_RULES failed" 1
  (cd "$(dirname "$PROM_RULES")" && promtool test rules atlas-alerts-test.yml >/dev/null) \
    || die "the alert rules' unit tests failed (cd docs/prometheus && promtool test rules atlas-alerts-test.yml)" 1
  say "alert rules checked and unit-tested with promtool ($(promtool --version 2>&1 | head -n 1))"
  # Spring Cloud LoadBalancer's per-instance meters, read by the dashboard's per-instance panels
  ORDER_COMMON_ARGS+=(--spring.cloud.loadbalancer.stats.micrometer.enabled=true)
fi

# --- process bookkeeping: everything started here is stopped on any exit ----------------------
PIDS=()
NAMES=()
# the processes that did not stop on SIGTERM (the log check fails on them)
KILLED=()

# stop_pids INDEX... : TERM the given processes together, wait up to 20 s each, then KILL; a process
# stopped (and reaped) is forgotten, so that its PID, which the system may give to another process, is
# never signalled again
stop_pids() {
  local i pid deadline
  for i in "$@"; do
    [[ -z "${PIDS[i]}" ]] || kill -TERM "${PIDS[i]}" 2>/dev/null || true
  done
  for i in "$@"; do
    pid=${PIDS[i]}
    [[ -n "$pid" ]] || continue
    deadline=$((SECONDS + 20))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      say "${NAMES[i]} (pid $pid) did not stop in 20 s; killing it"
      KILLED+=("${NAMES[i]}")
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    PIDS[i]=""
  done
}

# forget_pid PID : the process was reaped; it is not signalled again
forget_pid() {
  local i
  for i in "${!PIDS[@]}"; do [[ "${PIDS[i]}" != "$1" ]] || PIDS[i]=""; done
}

# The services first (they deregister on the way out), the embedded registry (started first, when the
# demo runs one: REGISTRY_INDEX) last.
REGISTRY_INDEX=-1
stop_all() {
  local i services=()
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do ((i == REGISTRY_INDEX)) || services+=("$i"); done
  ((${#services[@]} == 0)) || stop_pids "${services[@]}"
  ((REGISTRY_INDEX < 0)) || stop_pids "$REGISTRY_INDEX"
  PIDS=()
  NAMES=()
}

CURL_PID=
on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  [[ -z "$CURL_PID" ]] || kill "$CURL_PID" 2>/dev/null || true
  if ((${#PIDS[@]} > 0)); then
    say "stopping ${#PIDS[@]} process(es): ${NAMES[*]}"
    stop_all
  fi
  exit "$rc"
}
trap on_exit EXIT
trap 'echo; say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

# start NAME LOGFILE command... : runs the command in the background, remembers its PID
start() {
  local name=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1 &
  PIDS+=("$!")
  NAMES+=("$name")
}

pid_of() {
  local i
  for i in "${!NAMES[@]}"; do [[ "${NAMES[i]}" == "$1" ]] && { echo "${PIDS[i]}"; return; }; done
}

fail_start() {
  local name=$1 why=$2
  printf '%s\n' "demo: $name $why; last lines of .demo/$name.log (stack frames left out):" >&2
  grep -v -E '^[[:space:]]+(at |\.\.\. [0-9]+ )' "$DEMO_DIR/$name.log" | tail -n 30 >&2 || true
  exit 1
}

# --- free ports --------------------------------------------------------------------------------
TAKEN=" "
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# sets FREE to a port that nothing listens on and that this script has not handed out yet; from
# 10000-32767, below the ephemeral ports (Linux: 32768-60999, macOS and Windows: 49152-65535) that
# outgoing connections take: one picked there may be the local port of a connection by the time the
# service binds it (seen once: "Port ... was already in use")
free_port() {
  local attempt candidate
  for attempt in $(seq 1 200); do
    candidate=$((10000 + RANDOM % 22768))
    if [[ "$TAKEN" != *" $candidate "* ]] && ! port_in_use "$candidate"; then
      TAKEN+="$candidate "
      FREE=$candidate
      return 0
    fi
  done
  die "could not find a free port"
}
# The samples serve their actuator (health, prometheus, atlas, prestop) on a management port of its
# own, never on the application port that callers reach: MGMT_OF[port] is the management port of the
# application listening on port.
MGMT_OF=()
# sets PORT to a free port for an application, and MGMT_OF[PORT] to a free one for its actuator
pick_port() {
  free_port; PORT=$FREE
  free_port; MGMT_OF[PORT]=$FREE
}
# management_args PORT : the option that puts the actuator of the application on PORT on its own port
management_args() { echo "--management.server.port=${MGMT_OF[$1]}"; }

# --- waiting -----------------------------------------------------------------------------------
# wait_until NAME DESCRIPTION command... : polls the command until it succeeds, the process dies
# or START_TIMEOUT passes
wait_until() {
  local name=$1 what=$2 pid deadline=$((SECONDS + START_TIMEOUT))
  shift 2
  pid=$(pid_of "$name")
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || fail_start "$name" "exited while waiting for $what"
    ((SECONDS < deadline)) || fail_start "$name" "was not ready after ${START_TIMEOUT} s (waiting for $what)"
    sleep 0.5
  done
}

# prom_ready : the demo's Prometheus answers ready; prom_query QUERY : the number of series it returns
prom_ready() { curl -fsS --max-time 2 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1; }
prom_query() {
  curl -fsS --max-time 10 --get --data-urlencode "query=$1" "http://127.0.0.1:$PROM_PORT/api/v1/query" 2>/dev/null \
    | jq -r 'if .status == "success" then (.data.result | length) else "error" end' 2>/dev/null || echo error
}

# http_ready PORT : the application on PORT reports ready (asked on its management port)
http_ready() { curl -fsS --max-time 2 "http://127.0.0.1:${MGMT_OF[$1]}/actuator/health/readiness" 2>/dev/null | grep -q '"UP"'; }
registry_ready() { grep -q '^ZooKeeper ready on' "$DEMO_DIR/registry.log" 2>/dev/null; }
eureka_ready() { curl -fsS --max-time 2 -H 'Accept: application/json' "http://127.0.0.1:$EUREKA_PORT/eureka/apps" >/dev/null 2>&1; }
discovered_count() {
  curl -fsS --max-time 2 "http://127.0.0.1:$1/discovery/user-service" 2>/dev/null \
    | sed -n 's/.*"count":\([0-9]*\).*/\1/p'
}
sees_instances() { [[ "$(discovered_count "$1")" == "$2" ]]; }
# gateway_sees SERVICE N : the gateway's balancer for SERVICE lists N instances (/actuator/atlas/SERVICE;
# a call through the gateway first, so that the balancer of the service exists)
gateway_sees() {
  local path=users/1 count
  [[ "$1" == user-service ]] || path=orders/1
  curl -sS --max-time 5 -o /dev/null "http://127.0.0.1:$GATEWAY_PORT/api/$path" 2>/dev/null || true
  count=$(curl -fsS --max-time 2 "http://127.0.0.1:${MGMT_OF[GATEWAY_PORT]}/actuator/atlas/$1" 2>/dev/null \
    | grep -o '"instanceId":' | wc -l) || count=0
  [[ "$count" -eq "$2" ]]
}

# --- build -------------------------------------------------------------------------------------
if $build; then
  say "building the samples (./mvnw -B -q -DskipTests package) ..."
  ./mvnw -B -q -DskipTests package \
    -pl sample-registry,sample-eureka-server,sample-user-service,sample-order-service,sample-gateway -am \
    || die "the build failed (see the Maven output above)"
fi
jars=("$USER_JAR" "$ORDER_JAR" "$GATEWAY_JAR")
case "$registry" in
  zookeeper) jars+=("$REGISTRY_JAR") ;;
  eureka) jars+=("$EUREKA_JAR") ;;
esac
for jar in "${jars[@]}"; do
  [[ -f "$jar" ]] || die "missing $jar; run without --no-build" 2
done

mkdir -p "$DEMO_DIR"
rm -f "$DEMO_DIR"/*.log "$DEMO_DIR"/report-*.txt "$DEMO_DIR"/*.error "$DEMO_DIR"/*.result "$DEMO_DIR"/refresh-*.json

# The jars of the two Spring Boot applications are extracted once per build (Spring Boot's
# `-Djarmode=tools extract`): plain jars on the class path load markedly faster than jars nested
# in a jar, which counts with eight JVMs starting on two cores.
# extracted JAR : prints the runnable jar extracted from JAR into .demo/apps/, extracting it if needed
extracted() {
  local jar=$1 name dest
  name=$(basename "$jar" .jar)
  dest="$DEMO_DIR/apps/$name"
  if [[ ! -f "$dest/$name.jar" || "$jar" -nt "$dest/$name.jar" ]]; then
    rm -rf "$dest"
    java -Djarmode=tools -jar "$jar" extract --destination "$dest" >"$DEMO_DIR/extract.log" 2>&1 \
      || return 1
  fi
  echo "$dest/$name.jar"
}
USER_RUN=$(extracted "$USER_JAR") || die "could not extract $USER_JAR (see .demo/extract.log)"
ORDER_RUN=$(extracted "$ORDER_JAR") || die "could not extract $ORDER_JAR (see .demo/extract.log)"
GATEWAY_RUN=$(extracted "$GATEWAY_JAR") || die "could not extract $GATEWAY_JAR (see .demo/extract.log)"

# --- start -------------------------------------------------------------------------------------
# REGISTRY_ENV: the environment that points a service at the registry (the samples' 'nacos' profile
# switches them from ZooKeeper to Nacos)
if [[ "$registry" == nacos ]]; then
  nacos_host=${NACOS_ADDR%:*} nacos_port=${NACOS_ADDR##*:}
  for p in "$nacos_port" $((nacos_port + 1000)); do
    (exec 3<>"/dev/tcp/$nacos_host/$p") 2>/dev/null \
      || die "nothing listens on $nacos_host:$p; start the Nacos server first (NACOS_ADDR=$NACOS_ADDR; gRPC on port + 1000)" 2
  done
  # a group of this run's own, so that instances of another run or application cannot mix in
  NACOS_GROUP="ATLAS_DEMO_$$"
  REGISTRY_ENV=(NACOS_ADDR="$NACOS_ADDR" SPRING_PROFILES_ACTIVE=nacos SPRING_CLOUD_NACOS_DISCOVERY_GROUP="$NACOS_GROUP")
  say "using the Nacos server at $NACOS_ADDR (group $NACOS_GROUP)"
elif [[ "$registry" == eureka ]]; then
  free_port; EUREKA_PORT=$FREE
  REGISTRY_INDEX=${#PIDS[@]}
  # shellcheck disable=SC2086 # DEMO_JAVA_OPTS is a list of options
  start registry "$DEMO_DIR/registry.log" java $DEMO_JAVA_OPTS -jar "$EUREKA_JAR" --server.port="$EUREKA_PORT"
  wait_until registry "the Eureka server" eureka_ready
  say "Eureka server ready on http://127.0.0.1:$EUREKA_PORT/ (its dashboard)"
  REGISTRY_ENV=(EUREKA_URL="http://127.0.0.1:$EUREKA_PORT/eureka/" SPRING_PROFILES_ACTIVE=eureka)
else
  free_port; ZK_PORT=$FREE
  # shellcheck disable=SC2086 # DEMO_JAVA_OPTS is a list of options
  REGISTRY_INDEX=${#PIDS[@]}
  start registry "$DEMO_DIR/registry.log" java $DEMO_JAVA_OPTS -jar "$REGISTRY_JAR" --port="$ZK_PORT"
  wait_until registry "the registry" registry_ready
  say "ZooKeeper ready on 127.0.0.1:$ZK_PORT"
  REGISTRY_ENV=(ZK_ADDR="127.0.0.1:$ZK_PORT")
fi

USER_PORTS=()
USER_NAMES=()
for i in "${!USER_TAGS[@]}"; do
  pick_port
  USER_PORTS+=("$PORT")
  USER_NAMES+=("user-service-$((i + 1))")
  # shellcheck disable=SC2086
  start "user-service-$((i + 1))" "$DEMO_DIR/user-service-$((i + 1)).log" \
    env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" \
    --server.port="$PORT" "$(management_args "$PORT")" --sample.tag="${USER_TAGS[i]}" --sample.weight="${USER_WEIGHTS[i]}" \
    "${USER_ARGS[@]}"
done
pick_port; ORDER_PORT=$PORT
# shellcheck disable=SC2086
start order-service "$DEMO_DIR/order-service.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" --server.port="$ORDER_PORT" "$(management_args "$ORDER_PORT")" \
  "${ORDER_COMMON_ARGS[@]}" "${ORDER_OUTLIER_ARGS[@]}" $ORDER_ARGS
pick_port; CANARY_PORT=$PORT
# shellcheck disable=SC2086
start order-service-canary "$DEMO_DIR/order-service-canary.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" --server.port="$CANARY_PORT" "$(management_args "$CANARY_PORT")" \
  "${ORDER_COMMON_ARGS[@]}" --atlas.services.user-service.gray.weights.v2="$CANARY_PERCENT"
# the canary progression's order-service: its rules file imported as configuration (see
# order-service.yml), no canary to start with; started now, beside the others, so that its start costs
# little extra time
printf '# written by demo.sh: the canary progression starts closed\n%s=0\n' "$CANARY_KEY" >"$RULES_FILE"
pick_port; RULES_PORT=$PORT
# shellcheck disable=SC2086
start order-service-rules "$DEMO_DIR/order-service-rules.log" \
  env "${REGISTRY_ENV[@]}" ATLAS_RULES_FILE="$RULES_FILE" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" \
  --server.port="$RULES_PORT" "$(management_args "$RULES_PORT")" "${ORDER_COMMON_ARGS[@]}"
# the gateway, in the same registry (started beside the others too)
pick_port; GATEWAY_PORT=$PORT
# shellcheck disable=SC2086
start gateway "$DEMO_DIR/gateway.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$GATEWAY_RUN" --server.port="$GATEWAY_PORT" "$(management_args "$GATEWAY_PORT")" \
  "${GATEWAY_LANE_ARGS[@]}" $GATEWAY_ARGS

say "starting ${#USER_TAGS[@]} user-service instances (tags ${USER_TAGS[*]}, weights ${USER_WEIGHTS[*]}) and three order-services; logs in .demo/ ..."
for i in "${!USER_TAGS[@]}"; do
  wait_until "user-service-$((i + 1))" "readiness" http_ready "${USER_PORTS[i]}"
  say "user-service-$((i + 1)) ready on 127.0.0.1:${USER_PORTS[i]} (tag ${USER_TAGS[i]}, weight ${USER_WEIGHTS[i]})"
done
wait_until order-service "readiness" http_ready "$ORDER_PORT"
say "order-service ready on 127.0.0.1:$ORDER_PORT (baseline tag v1)"
wait_until order-service-canary "readiness" http_ready "$CANARY_PORT"
say "order-service-canary ready on 127.0.0.1:$CANARY_PORT (baseline tag v1, ${CANARY_PERCENT} % canary on v2)"
wait_until order-service-rules "readiness" http_ready "$RULES_PORT"
say "order-service-rules ready on 127.0.0.1:$RULES_PORT (baseline tag v1, rules from .demo/rules.properties: ${CANARY_KEY}=0)"
# The balancer caches the instance list it sees first: wait until discovery sees every instance.
for caller in order-service:"$ORDER_PORT" order-service-canary:"$CANARY_PORT" order-service-rules:"$RULES_PORT"; do
  wait_until "${caller%%:*}" "its DiscoveryClient to see ${#USER_TAGS[@]} user-service instances" \
    sees_instances "${caller##*:}" "${#USER_TAGS[@]}"
done
say "the three order-services discover ${#USER_TAGS[@]} user-service instances"
wait_until gateway "readiness" http_ready "$GATEWAY_PORT"
wait_until gateway "its balancer to see ${#USER_TAGS[@]} user-service instances" \
  gateway_sees user-service "${#USER_TAGS[@]}"
wait_until gateway "its balancer to see 3 order-service instances" gateway_sees order-service 3
if $prometheus; then
  free_port; PROM_PORT=$FREE
  prom_targets=""
  for p in "$ORDER_PORT" "$CANARY_PORT" "$RULES_PORT" "$GATEWAY_PORT"; do prom_targets+="'127.0.0.1:${MGMT_OF[$p]}', "; done
  cat >"$DEMO_DIR/prometheus.yml" <<PROM
global: { scrape_interval: 1s, evaluation_interval: 1s }
rule_files: [ '$PROM_RULES' ]
scrape_configs:
  - job_name: atlas-demo
    metrics_path: /actuator/prometheus
    static_configs: [ { targets: [ ${prom_targets%, } ] } ]
PROM
  rm -rf "$DEMO_DIR/prometheus-data"
  start prometheus "$DEMO_DIR/prometheus.log" prometheus --config.file="$DEMO_DIR/prometheus.yml" \
    --storage.tsdb.path="$DEMO_DIR/prometheus-data" --web.listen-address="127.0.0.1:$PROM_PORT"
  wait_until prometheus "readiness" prom_ready
  PROM_STARTED=$(date +%s)
  say "Prometheus on http://127.0.0.1:$PROM_PORT scrapes the three order-services and the gateway every second"
fi
say "gateway ready on 127.0.0.1:$GATEWAY_PORT (/api/users/** → user-service, /api/orders/** → order-service; lane rules X-User-Group: beta and cookie canary=1 → v2; ${CANARY_PERCENT} % canary on v2 sticky by X-User-Id)"

# --- reports -----------------------------------------------------------------------------------
failed=()

# report NAME URL : fetches a plain-text report, prints it, records NAME as failed unless it PASSes
report() {
  local name=$1 url=$2 out status
  out="$DEMO_DIR/report-$name.txt"
  echo
  # in the background + wait, so that Ctrl-C or TERM is handled at once, not after the burst
  curl -sS --max-time 600 -o "$out" -w '%{http_code}' "$url" >"$out.status" 2>"$out.error" &
  CURL_PID=$!
  if wait "$CURL_PID"; then status=$(cat "$out.status"); else status="none"; fi
  CURL_PID=
  if [[ "$status" == 200 ]]; then
    cat "$out"
  else
    echo "$name: no report (HTTP status: $status)"
    cat "$out" "$out.error" 2>/dev/null || true
    echo
  fi
  rm -f "$out.status" "$out.error"
  [[ "$status" == 200 ]] && grep -q '^RESULT: PASS' "$out" || failed+=("$name")
}

echo
say "weights: $CALLS untagged calls per client; expected = the instance's weight share of the v1 lane"
for client in "${CLIENTS[@]}"; do
  report "$client" "http://127.0.0.1:$ORDER_PORT/traffic/report?client=$client&calls=$CALLS&concurrency=$CONCURRENCY&tolerance=$TOLERANCE"
done

echo
say "gray: GET /chain/{id} = hop 1 (Feign from @Async) + hop 2 (WebClient after boundedElastic); share of calls per tag"
GRAY="http://127.0.0.1:$ORDER_PORT/gray/report?calls=$GRAY_CALLS&concurrency=$CONCURRENCY"
report gray-untagged "$GRAY&expect=v1&scenario=untagged%20(no%20X-Service-Version)"
report gray-v2 "$GRAY&version=v2&expect=v2&scenario=X-Service-Version:%20v2"
report gray-v3 "$GRAY&version=v3&expect=v1&scenario=X-Service-Version:%20v3%20(nobody%20runs%20v3:%20fallback%20to%20baseline)"
report gray-canary "http://127.0.0.1:$CANARY_PORT/gray/report?calls=$CANARY_CALLS&concurrency=$CONCURRENCY&expect-share=v2:$CANARY_PERCENT:$CANARY_TOLERANCE&scenario=untagged,%20${CANARY_PERCENT}%20%25%20canary%20on%20v2"

# --- gateway -----------------------------------------------------------------------------------
# gateway_calls FILE PATH N REPEAT [CURL-OPTION...] : writes a curl config to FILE for N × REPEAT GETs
# of http://127.0.0.1:GATEWAY_PORT/api/PATH/{i} (i = 1..N, each REPEAT times in a row); an option
# containing {i} gets i too (a header per user); each answer is followed by " HTTP<status>" on its line
gateway_calls() {
  local file=$1 path=$2 n=$3 repeat=$4 i r opt
  shift 4
  : >"$file"
  for ((i = 1; i <= n; i++)); do
    for ((r = 0; r < repeat; r++)); do
      # "next" separates two URLs' options: not after the last one (curl would look for one more URL)
      ((i == 1 && r == 0)) || printf 'next\n' >>"$file"
      printf 'url = "http://127.0.0.1:%s/api/%s/%s"\nmax-time = 20\nwrite-out = " HTTP%%{http_code}\\n"\n' \
        "$GATEWAY_PORT" "$path" "$i" >>"$file"
      for opt in "$@"; do printf '%s\n' "${opt//\{i\}/$i}" >>"$file"; done
    done
  done
}

# gateway_row NAME LABEL EXPECT REPEAT CONFIG : runs the calls of CONFIG (one curl, one connection),
# prints a row of the gateway table and records NAME as failed unless it PASSes. EXPECT: all:v2
# (every call on v2), share:v2:PERCENT:TOLERANCE (v2's share of the calls within TOLERANCE points of
# PERCENT, every other call on v1), sticky:v2:PERCENT:TOLERANCE (REPEAT calls per user: v2's share of
# the users within TOLERANCE points, each user's calls all in one lane), chain:v2 (every hop of
# user-service on v2)
gateway_row() {
  local name=$1 label=$2 expect=$3 repeat=$4 config=$5 out line
  out="$DEMO_DIR/report-gateway-$name.txt"
  curl -sS -K "$config" >"$out" 2>"$out.error" || true
  [[ -s "$out.error" ]] || rm -f "$out.error"
  line=$(awk -v expect="$expect" -v repeat="$repeat" -v label="$label" '
    {
      calls++
      status = $NF; sub(/^HTTP/, "", status)
      n = 0; s = $0
      while (match(s, /"tag":"[^"]*"/)) { n++; tag[n] = substr(s, RSTART + 7, RLENGTH - 8); s = substr(s, RSTART + RLENGTH) }
      if (status != 200 || n == 0) { failed++; next }
      for (k = 1; k <= n; k++) { hops++; if (tag[k] == "v2") v2++; else if (tag[k] == "v1") v1++; else other++ }
      user = int((calls - 1) / repeat)
      lane = (tag[1] == "v2") ? "v2" : "v1"
      if (user in lanes && lanes[user] != lane) switched[user] = 1
      lanes[user] = lane
    }
    END {
      split(expect, e, ":")
      ok = (calls > 0 && failed == 0)
      v1s = hops ? 100 * v1 / hops : 0; v2s = hops ? 100 * v2 / hops : 0
      if (e[1] == "all" || e[1] == "chain") {
        ok = ok && v2 == hops && hops > 0
        want = (e[1] == "chain") ? "both user-service hops v2" : "all v2"
        detail = ""
      } else if (e[1] == "share") {
        ok = ok && other == 0 && v2s >= e[3] - e[4] && v2s <= e[3] + e[4]
        want = sprintf("v2 %s %% ± %s", e[3], e[4]); detail = ""
      } else {
        users = 0; inv2 = 0; sw = 0
        for (u in lanes) { users++; if (lanes[u] == "v2") inv2++ }
        for (u in switched) sw++
        share = users ? 100 * inv2 / users : 0
        ok = ok && other == 0 && sw == 0 && share >= e[3] - e[4] && share <= e[3] + e[4]
        want = sprintf("users on v2 %s %% ± %s, none switching", e[3], e[4])
        detail = sprintf(" (%d users: %.1f %% on v2, %d switched lanes)", users, share, sw)
      }
      printf "%-46s %6d %6d %7.1f %% %6.1f %%  %-40s %s%s\n", label, calls, failed, v1s, v2s, want, ok ? "PASS" : "FAIL", detail
    }' "$out")
  [[ -n "$line" ]] || line=$(printf '%-46s no answer (see %s)  FAIL' "$label" "${out#"$ROOT"/}.error")
  echo "$line"
  [[ "$line" == *" PASS"* ]] || { failed+=("gateway-$name"); gw_pass=false; }
}

echo
say "gateway: one row per way of choosing the lane at the edge (curl → gateway → Atlas → user-service; one connection, one call at a time)"
gw_started=$SECONDS
# the untagged and sticky rows are draws of a 10 % canary: their tolerance as the canary progression's
gw_tol=$(awk -v p="$CANARY_PERCENT" -v n="$GATEWAY_SHARE_CALLS" -v min="$CANARY_STEP_TOLERANCE" \
  'BEGIN { q = p / 100; s = 400 * sqrt(q * (1 - q) / n); t = (s > min) ? s : min; printf "%.1f", t }')
gw_user_tol=$(awk -v p="$CANARY_PERCENT" -v n="$GATEWAY_USERS" -v min="$CANARY_STEP_TOLERANCE" \
  'BEGIN { q = p / 100; s = 400 * sqrt(q * (1 - q) / n); t = (s > min) ? s : min; printf "%.1f", t }')
gw_pass=true
echo
echo "scenario: the gateway (127.0.0.1:$GATEWAY_PORT) in front of user-service v1 ×3, v2 ×2 and order-service ×3 (untagged); share of calls per tag of the instance that answered"
printf '%-46s %6s %6s %9s %8s  %-40s %s\n' "request" calls failed v1 v2 expected result
gw_cfg="$DEMO_DIR/gateway-calls.txt"
gateway_calls "$gw_cfg" users "$GATEWAY_SHARE_CALLS" 1
gateway_row untagged "untagged (${CANARY_PERCENT} % canary, random per call)" "share:v2:$CANARY_PERCENT:$gw_tol" 1 "$gw_cfg"
gateway_calls "$gw_cfg" users "$GATEWAY_CALLS" 1 'header = "X-Service-Version: v2"'
gateway_row version-v2 "X-Service-Version: v2" all:v2 1 "$gw_cfg"
gateway_calls "$gw_cfg" users "$GATEWAY_CALLS" 1 'header = "X-User-Group: beta"'
gateway_row rule-header "X-User-Group: beta (lane rule)" all:v2 1 "$gw_cfg"
gateway_calls "$gw_cfg" users "$GATEWAY_CALLS" 1 'cookie = "canary=1"'
gateway_row rule-cookie "cookie canary=1 (lane rule)" all:v2 1 "$gw_cfg"
gateway_calls "$gw_cfg" users "$GATEWAY_USERS" 2 'header = "X-User-Id: user-{i}"'
gateway_row sticky "X-User-Id: $GATEWAY_USERS users × 2 (sticky canary)" "sticky:v2:$CANARY_PERCENT:$gw_user_tol" 2 "$gw_cfg"
gateway_calls "$gw_cfg" orders/chain "$GATEWAY_CALLS" 1 'header = "X-User-Group: beta"'
gateway_row chain "three hops, X-User-Group: beta (per hop)" chain:v2 1 "$gw_cfg"
rm -f "$gw_cfg"
echo "expected: untagged calls on v1 but for about ${CANARY_PERCENT} % on v2; X-Service-Version: v2, X-User-Group: beta and cookie canary=1 all on v2; each X-User-Id always in one lane, about ${CANARY_PERCENT} % of the users on v2; the three-hop call (gateway → order-service → user-service → user-service, order-service having no v2 instance) on v2 on both user-service hops; no failed call (answers in .demo/report-gateway-*.txt)"
if $gw_pass; then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
fi
say "  gateway: $((SECONDS - gw_started)) s"

# --- background traffic ------------------------------------------------------------------------
# load_loop NAME PORT CONCURRENCY BURST : a closed loop of bursts of BURST untagged calls, CONCURRENCY
# at a time, through the order-service on PORT (GET /traffic, RestTemplate) while .demo/NAME.on exists;
# writes "sent failed first-error" to .demo/NAME.result
load_loop() {
  local name=$1 port=$2 concurrency=$3 burst=$4 sent=0 failed=0 first="" out calls fails err
  while [[ -f "$DEMO_DIR/$name.on" ]]; do
    if out=$(curl -fsS --max-time 300 \
        "http://127.0.0.1:$port/traffic?client=rest-template&calls=$burst&concurrency=$concurrency" 2>&1); then
      calls=$(sed -n 's/.*"calls":\([0-9]*\).*/\1/p' <<<"$out")
      fails=$(sed -n 's/.*"failures":\([0-9]*\).*/\1/p' <<<"$out")
      err=$(sed -n 's/.*"firstError":"\([^"]*\)".*/\1/p' <<<"$out")
    else
      calls=$burst fails=$burst err="the burst itself failed: $out"
    fi
    sent=$((sent + ${calls:-0}))
    failed=$((failed + ${fails:-0}))
    [[ -n "$first" || -z "$err" ]] || first=$err
  done
  echo "$sent $failed $first" >"$DEMO_DIR/$name.result"
}

# start_load NAME [PORT [CONCURRENCY [BURST]]] : starts load_loop NAME in the background (stopped by
# stop_load NAME); by default through order-service, ROLL_CONCURRENCY at a time, bursts of ROLL_BURST
start_load() {
  touch "$DEMO_DIR/$1.on"
  rm -f "$DEMO_DIR/$1.result"
  load_loop "$1" "${2:-$ORDER_PORT}" "${3:-$ROLL_CONCURRENCY}" "${4:-$ROLL_BURST}" >"$DEMO_DIR/$1-load.log" 2>&1 &
  PIDS+=("$!")
  NAMES+=("$1-load")
}

# stop_load NAME : ends the loop after its current burst; sets LOAD_SENT, LOAD_FAILED, LOAD_FIRST
stop_load() {
  rm -f "$DEMO_DIR/$1.on"
  wait "$(pid_of "$1-load")" 2>/dev/null || true
  LOAD_SENT="" LOAD_FAILED="" LOAD_FIRST=""
  read -r LOAD_SENT LOAD_FAILED LOAD_FIRST <"$DEMO_DIR/$1.result" || true
}

# gateway_load_loop NAME CONCURRENCY BURST : a closed loop of bursts of BURST GET /api/users/{i} through
# the gateway, CONCURRENCY at a time (curl --parallel), while .demo/NAME.on exists; writes
# "sent failed first-error" to .demo/NAME.result (a failure: any status but 200, or no answer)
gateway_load_loop() {
  local name=$1 concurrency=$2 burst=$3 sent=0 failed=0 first="" codes ok total
  while [[ -f "$DEMO_DIR/$name.on" ]]; do
    codes=$(curl -sS -Z --parallel-max "$concurrency" --max-time 30 -o /dev/null -w '%{http_code}\n' \
      "http://127.0.0.1:$GATEWAY_PORT/api/users/[1-$burst]" 2>/dev/null) || true
    ok=$(grep -c '^200$' <<<"$codes") || ok=0
    total=$(grep -c . <<<"$codes") || total=0
    sent=$((sent + burst))
    failed=$((failed + burst - ok))
    if [[ -z "$first" ]] && ((ok < burst)); then
      first="statuses of the burst: $(grep -v '^200$' <<<"$codes" | sort | uniq -c | tr -s ' \n' ' ')"
      ((total == burst)) || first+="; $((burst - total)) without any answer"
    fi
  done
  echo "$sent $failed $first" >"$DEMO_DIR/$name.result"
}

# start_gateway_load NAME : starts gateway_load_loop NAME in the background (stopped by stop_load
# NAME), ROLL_CONCURRENCY at a time, bursts of ROLL_BURST
start_gateway_load() {
  touch "$DEMO_DIR/$1.on"
  rm -f "$DEMO_DIR/$1.result"
  gateway_load_loop "$1" "$ROLL_CONCURRENCY" "$ROLL_BURST" >"$DEMO_DIR/$1-load.log" 2>&1 &
  PIDS+=("$!")
  NAMES+=("$1-load")
}

# --- canary progression ------------------------------------------------------------------------
# write_rules PERCENT : rewrites order-service-rules' rules file with v2's canary share at PERCENT
# (written aside, then moved: a reader never sees half a file)
write_rules() {
  printf '# written by demo.sh: canary progression step, %s %%\n%s=%s\n' "$1" "$CANARY_KEY" "$1" >"$RULES_FILE.tmp"
  mv -f "$RULES_FILE.tmp" "$RULES_FILE"
}

# count_of JSON PORT : the calls order-service's /traffic answer counts for the instance on PORT (empty when none)
count_of() {
  grep -o "\"port\":$2,[^}]*\"count\":[0-9]*" <<<"$1" | sed -n 's/.*"count":\([0-9]*\)$/\1/p' | head -n 1 || true
}

# report_share FILE TAG : prints TAG's share of hop 1 in the /gray/report table in FILE (e.g. 10.3),
# nothing when the table has no such tag
report_share() {
  awk -v tag="$2" '
    $1 == "hop" && $2 == "call" { tags = NF - 2; for (i = 3; i <= NF; i++) if ($i == tag) col = i - 2; next }
    $1 == "1" && col > 0 { print $(NF - 2 * (tags - col) - 1); exit }' "$1" 2>/dev/null || true
}

echo
say "canary progression: untagged traffic flows through order-service-rules while $CANARY_KEY steps through ${CANARY_STEPS// / → } %"
say "  each step rewrites .demo/rules.properties and POSTs /actuator/refresh on order-service-rules' management port (127.0.0.1:${MGMT_OF[RULES_PORT]})"
prog_started=$SECONDS
# light background traffic (bursts of 200 calls, CONCURRENCY at a time): it must keep flowing, not
# starve the measurement on a small machine
start_load canary-progression "$RULES_PORT" "$CONCURRENCY" 200
sleep 1
echo
echo "scenario: canary progression on order-service-rules; after each refresh, $CANARY_STEP_CALLS untagged calls (GET /orders/{id}, RestClient, $CONCURRENCY at a time) measure v2's share"
printf '%-4s %7s  %-7s %-48s %9s %9s %7s  %s\n' step target refresh "changed keys" "v2 share" tolerance failed result
prog_pass=true
prev=0  # the file's value at startup
step=0
for target in $CANARY_STEPS; do
  step=$((step + 1))
  write_rules "$target"
  refresh=$(curl -sS --max-time 30 -X POST -o "$DEMO_DIR/refresh-$step.json" -w '%{http_code}' \
    "http://127.0.0.1:${MGMT_OF[RULES_PORT]}/actuator/refresh" 2>/dev/null) || refresh=none
  keys=$(tr -d '\n' <"$DEMO_DIR/refresh-$step.json" 2>/dev/null || true)
  out="$DEMO_DIR/report-canary-step-$step.txt"
  # each call is an independent draw: the tolerance is CANARY_STEP_TOLERANCE points, or 4 standard
  # deviations of the share of CANARY_STEP_CALLS draws when that is more (a false FAIL about once in
  # 16,000 steps)
  tol=$(awk -v p="$target" -v n="$CANARY_STEP_CALLS" -v min="$CANARY_STEP_TOLERANCE" \
    'BEGIN { q = p / 100; s = 400 * sqrt(q * (1 - q) / n); t = (s > min) ? s : min; printf "%.1f", t }')
  status=$(curl -sS --max-time 600 -o "$out" -w '%{http_code}' \
    "http://127.0.0.1:$RULES_PORT/gray/report?path=orders&client=rest-client&calls=$CANARY_STEP_CALLS&concurrency=$CONCURRENCY&expect-share=v2:$target:$tol&scenario=canary%20step%20$step:%20v2%20at%20$target%20%25" \
    2>/dev/null) || status=none
  share=$(report_share "$out" v2)
  fails=$(sed -n 's/^scenario: .*, \([0-9]*\) failed)$/\1/p' "$out" 2>/dev/null | head -n 1 || true)
  # the refresh must list the key when its value changed, and only then
  if ((target != prev)); then [[ "$keys" == *"\"$CANARY_KEY\""* ]] && keys_ok=true || keys_ok=false
  else [[ "$keys" != *"\"$CANARY_KEY\""* ]] && keys_ok=true || keys_ok=false; fi
  if [[ "$refresh" == 200 ]] && $keys_ok && [[ "$status" == 200 ]] && grep -q '^RESULT: PASS' "$out"; then
    verdict=PASS
  else
    verdict=FAIL prog_pass=false
    failed+=("canary-step-$step-$target")
  fi
  printf '%-4s %5s %%  %-7s %-48s %7s %% %7s %7s  %s\n' "$step" "$target" "$refresh" "${keys:-(no answer)}" \
    "${share:-?}" "± $tol" "${fails:-?}" "$verdict"
  prev=$target
done
sleep 1
stop_load canary-progression
prog_sent=$LOAD_SENT prog_failed=$LOAD_FAILED prog_first=$LOAD_FIRST
echo "background traffic (GET /traffic, RestTemplate, $CONCURRENCY at a time, all along): sent ${prog_sent:-0}, failed ${prog_failed:-unknown}${prog_first:+ (first: $prog_first)}"
echo "expected: every refresh answers 200 and lists $CANARY_KEY when its value changed; v2's share within the tolerance of the target right after the refresh ($CANARY_STEP_TOLERANCE points, or 4 standard deviations of the share of $CANARY_STEP_CALLS random draws when more); no failed call, in the steps or in the background (each step's table: .demo/report-canary-step-N.txt)"
if [[ "${prog_failed:-x}" != 0 || "${prog_sent:-0}" -eq 0 ]]; then
  prog_pass=false
  failed+=(canary-progression-traffic)
fi
if $prog_pass; then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
fi
say "  canary progression: $((SECONDS - prog_started)) s"
echo

# --- rolling restart ---------------------------------------------------------------------------
echo
say "rolling restart: $ROLL_CONCURRENCY concurrent GETs through order-service (RestTemplate) and $ROLL_CONCURRENCY through the gateway while each v1 user-service in turn gets SIGTERM and a replacement starts"
roll_started=$SECONDS
start_load rolling
start_gateway_load rolling-gateway
sleep 2
for i in "${!USER_TAGS[@]}"; do
  [[ "${USER_TAGS[i]}" == v1 ]] || continue
  old=${USER_NAMES[i]}
  old_pid=$(pid_of "$old")
  say "  SIGTERM $old (pid $old_pid, port ${USER_PORTS[i]}); Atlas deregisters it and drains $ROLL_DRAIN"
  kill -TERM "$old_pid" 2>/dev/null || true
  pick_port
  new="$old-r"
  # shellcheck disable=SC2086
  start "$new" "$DEMO_DIR/$new.log" \
    env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" \
    --server.port="$PORT" "$(management_args "$PORT")" --sample.tag="${USER_TAGS[i]}" --sample.weight="${USER_WEIGHTS[i]}" \
    "${USER_ARGS[@]}"
  USER_PORTS[i]=$PORT
  USER_NAMES[i]=$new
  deadline=$((SECONDS + 30))
  while kill -0 "$old_pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  kill -0 "$old_pid" 2>/dev/null && fail_start "$old" "did not stop within 30 s of SIGTERM"
  wait "$old_pid" 2>/dev/null || true
  wait_until "$new" "readiness" http_ready "$PORT"
  wait_until order-service "its DiscoveryClient to see ${#USER_TAGS[@]} user-service instances" \
    sees_instances "$ORDER_PORT" "${#USER_TAGS[@]}"
  wait_until gateway "its balancer to see ${#USER_TAGS[@]} user-service instances" \
    gateway_sees user-service "${#USER_TAGS[@]}"
  say "  $old stopped; replacement $new ready on 127.0.0.1:$PORT and discovered"
done
sleep 2
stop_load rolling
roll_sent=$LOAD_SENT roll_failed=$LOAD_FAILED roll_first=$LOAD_FIRST
stop_load rolling-gateway
roll_gw_sent=$LOAD_SENT roll_gw_failed=$LOAD_FAILED roll_gw_first=$LOAD_FIRST
echo
echo "rolling restart of 3 user-service instances under $ROLL_CONCURRENCY concurrent GETs through order-service and $ROLL_CONCURRENCY through the gateway ($((SECONDS - roll_started)) s)"
echo "through order-service: requests sent ${roll_sent:-0}, failed ${roll_failed:-unknown}${roll_first:+ (first: $roll_first)}"
echo "through the gateway:   requests sent ${roll_gw_sent:-0}, failed ${roll_gw_failed:-unknown}${roll_gw_first:+ (first: $roll_gw_first)}"
if [[ "${roll_failed:-x}" == 0 && "${roll_sent:-0}" -gt 0 && "${roll_gw_failed:-x}" == 0 && "${roll_gw_sent:-0}" -gt 0 ]]; then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
  [[ "${roll_failed:-x}" == 0 && "${roll_sent:-0}" -gt 0 ]] || failed+=(rolling-restart)
  [[ "${roll_gw_failed:-x}" == 0 && "${roll_gw_sent:-0}" -gt 0 ]] || failed+=(rolling-restart-gateway)
fi
echo

# --- crash -------------------------------------------------------------------------------------
# NOW := the wall clock in epoch milliseconds (the clock of the ejectedAt /actuator/atlas shows)
now_ms() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    local t=${EPOCHREALTIME/[.,]/}
    NOW=$((t / 1000))
  else
    NOW=$(($(date +%s) * 1000))
  fi
}

# crash_poll : reads the crashed instance's row (CRASH_PORT) of order-service's
# /actuator/atlas/user-service: C_SEEN = listed, absent (not among the instances order-service last
# saw) or none (no answer); C_PICKS, C_INFLIGHT, C_EJECTED (true or false), C_AT (epoch ms of the ejection, empty
# when not ejected); NOW = when the answer came
crash_poll() {
  local out re="\"port\":$CRASH_PORT,[^}]*\}"
  C_SEEN=none C_PICKS="" C_INFLIGHT="" C_EJECTED="" C_AT=""
  out=$(curl -fsS --max-time 2 "http://127.0.0.1:${MGMT_OF[ORDER_PORT]}/actuator/atlas/user-service" 2>/dev/null) || out=""
  now_ms
  [[ -n "$out" ]] || return 0
  if [[ ! "$out" =~ $re ]]; then C_SEEN=absent; return 0; fi
  local row=${BASH_REMATCH[0]}
  C_SEEN=listed
  [[ ! "$row" =~ \"picks\":([0-9]+) ]] || C_PICKS=${BASH_REMATCH[1]}
  [[ ! "$row" =~ \"inFlight\":([0-9]+) ]] || C_INFLIGHT=${BASH_REMATCH[1]}
  [[ ! "$row" =~ \"ejected\":(true|false) ]] || C_EJECTED=${BASH_REMATCH[1]}
  [[ ! "$row" =~ \"ejectedAt\":([0-9]+) ]] || C_AT=${BASH_REMATCH[1]}
}

# secs MS : MS milliseconds as seconds with one decimal
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }

# The v1 instance with the largest weight (half of the untagged traffic) crashes.
crash_i=-1
for i in "${!USER_TAGS[@]}"; do
  [[ "${USER_TAGS[i]}" != v1 ]] || ((crash_i >= 0 && USER_WEIGHTS[i] <= USER_WEIGHTS[crash_i])) || crash_i=$i
done
CRASH_PORT=${USER_PORTS[crash_i]}
victim=${USER_NAMES[crash_i]}
# Its replacement registers under the same instance id on the same port: the same instance (id, host
# and port) as order-service's outlier detection keys it. (On Nacos the instance id is made of the
# address and cluster anyway.)
crash_id=$(curl -fsS --max-time 5 "http://127.0.0.1:$CRASH_PORT/users/1" 2>/dev/null \
  | sed -n 's/.*"instanceId":"\([^"]*\)".*/\1/p' || true)
[[ -n "$crash_id" ]] || fail_start "$victim" "did not answer GET /users/1 before the crash"

echo
say "crash: $ROLL_CONCURRENCY concurrent GETs through order-service (RestTemplate, retry on another instance) while $victim (127.0.0.1:$CRASH_PORT, v1, weight ${USER_WEIGHTS[crash_i]}) gets SIGKILL and a replacement starts on the same port with the same instance id"
say "  order-service ejects after 5 failures in a row for ${CRASH_EJECTION} s × times ejected, then TCP-probes every ${CRASH_PROBE} s (--atlas.outlier.base-ejection-time=${CRASH_EJECTION}s --atlas.outlier.probe.interval=${CRASH_PROBE}s)"
log_from=$(($(wc -l <"$DEMO_DIR/order-service.log") + 1))
start_load crash
sleep 2
# the kill comes while order-service has requests in flight on the instance (not between two bursts)
deadline=$((SECONDS + 5))
crash_poll
while [[ "${C_INFLIGHT:-0}" == 0 ]] && ((SECONDS < deadline)); do
  sleep 0.05
  crash_poll
done
picks_at_kill=${C_PICKS:-0}
victim_pid=$(pid_of "$victim")
kill -KILL "$victim_pid" 2>/dev/null || true
now_ms
t_kill=$NOW
wait "$victim_pid" 2>/dev/null || true
forget_pid "$victim_pid"
say "  SIGKILL $victim (pid $victim_pid): no deregistration; the registry lists it until it notices ($DROP_REASON)"

# 1. until order-service ejects it (or, on a registry that notices the crash itself, no longer lists
# it), at most 10 s
how="" t_seen="" t_eject="" picks_first=""
picks_last=$picks_at_kill
while ((NOW - t_kill < 10000)); do
  sleep 0.1
  crash_poll
  if [[ "$C_SEEN" == listed && "$C_EJECTED" == true ]]; then
    how=ejected t_seen=$NOW picks_first=${C_PICKS:-0}
    # the moment of the ejection itself, as order-service's outlier detection recorded it
    [[ -z "$C_AT" ]] || t_eject=$C_AT
    break
  elif [[ "$C_SEEN" == absent ]]; then
    how=unlisted t_seen=$NOW picks_first=$picks_last
    break
  fi
  [[ "$C_SEEN" != listed ]] || picks_last=${C_PICKS:-$picks_last}
done
t_eject=${t_eject:-${t_seen:-}}
if [[ -n "$how" ]]; then
  say "  $how after $(secs $((t_eject - t_kill))) s; starting the replacement"
else
  say "  neither ejected nor unlisted 10 s after the kill; starting the replacement"
fi

# 2. the replacement: until it is back in rotation (ejected false and picked again) and ready
replacement="$victim-c"
# shellcheck disable=SC2086
start "$replacement" "$DEMO_DIR/$replacement.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" \
  --server.port="$CRASH_PORT" "$(management_args "$CRASH_PORT")" --sample.instance-id="$crash_id" \
  --sample.tag="${USER_TAGS[crash_i]}" --sample.weight="${USER_WEIGHTS[crash_i]}" "${USER_ARGS[@]}"
USER_NAMES[crash_i]=$replacement
now_ms
t_restart=$NOW
t_open="" t_ready="" t_return="" t_pick="" t_unlisted=""
picks_ejected=$picks_first picks_dead=$picks_last
deadline=$((t_restart + START_TIMEOUT * 1000))
while ((NOW < deadline)); do
  kill -0 "$(pid_of "$replacement")" 2>/dev/null || fail_start "$replacement" "exited while starting"
  if [[ -z "$t_open" ]] && port_in_use "$CRASH_PORT"; then now_ms; t_open=$NOW; fi
  if [[ -n "$t_open" && -z "$t_ready" ]] && http_ready "$CRASH_PORT"; then now_ms; t_ready=$NOW; fi
  crash_poll
  case "$C_SEEN" in
    absent) [[ -n "$t_unlisted" ]] || t_unlisted=$NOW ;;
    listed)
      if [[ "$C_EJECTED" == true ]]; then
        picks_ejected=${C_PICKS:-$picks_ejected}
      elif [[ -z "$how" ]]; then
        # never ejected: every pick before its port opened went to a dead process
        [[ -n "$t_open" ]] || picks_dead=${C_PICKS:-$picks_dead}
      else
        [[ -n "$t_return" ]] || t_return=$NOW
        if [[ -z "$t_pick" && -n "$C_PICKS" && "$C_PICKS" != "$picks_ejected" && "$C_PICKS" -gt 0 ]]; then
          t_pick=$NOW
        fi
      fi ;;
  esac
  # done once it is ready and back in rotation; or, if it is not back 20 s after it got ready
  # (and its ejection time, if any, is over), no longer waiting
  if [[ -n "$t_ready" ]]; then
    [[ -n "$how" && -z "$t_pick" ]] || break
    ((NOW < t_ready + 20000 || NOW < t_eject + CRASH_EJECTION * 1000 + 20000)) || break
  fi
  sleep 0.1
done
sleep 1
stop_load crash
crash_sent=$LOAD_SENT crash_failed=$LOAD_FAILED crash_first=$LOAD_FIRST
[[ -n "$t_ready" ]] || fail_start "$replacement" "was not ready after ${START_TIMEOUT} s"

echo
echo "crash of $victim (SIGKILL: no deregistration) under $ROLL_CONCURRENCY concurrent GETs"
echo "order-service: eject after 5 gateway failures or 5 5xx in a row, for ${CRASH_EJECTION} s × times ejected; TCP probe every ${CRASH_PROBE} s"
printf '%-48s %s\n' "requests sent:" "${crash_sent:-0}"
printf '%-48s %s\n' "requests failed:" "${crash_failed:-unknown}${crash_first:+ (first: $crash_first)}"
after=""
case "$how" in
  ejected)
    after=$((picks_ejected - picks_first))
    printf '%-48s %s\n' "attempts on the dead instance before ejection:" \
      "$((picks_first - picks_at_kill)) (its picks from the kill until /actuator/atlas showed it ejected)"
    printf '%-48s %s\n' "attempts on the dead instance after ejection:" \
      "$after (its picks while it was ejected)"
    printf '%-48s %s\n' "time to eject:" \
      "$(secs $((t_eject - t_kill))) s (kill → ejection; /actuator/atlas showed it after $(secs $((t_seen - t_kill))) s)" ;;
  unlisted)
    after=0
    printf '%-48s %s\n' "attempts on the dead instance before removal:" "$((picks_first - picks_at_kill))"
    printf '%-48s %s\n' "attempts on the dead instance after removal:" "0 (no longer listed)"
    printf '%-48s %s\n' "time to eject:" "none: the registry stopped listing it after $(secs $((t_seen - t_kill))) s" ;;
  *)
    printf '%-48s %s\n' "attempts on the dead instance:" \
      "$((picks_dead - picks_at_kill)) (its picks from the kill until its port opened again)"
    printf '%-48s %s\n' "time to eject:" "never (not ejected within 10 s of the kill)" ;;
esac
if [[ -n "$t_return" ]]; then
  printf '%-48s %s\n' "time to return:" \
    "$(secs $((t_return - t_restart))) s after the restart (its port open after $(secs $((t_open - t_restart))) s, ejected false after $(secs $((t_return - t_restart))) s, $(
      [[ -n "$t_pick" ]] && echo "picked again after $(secs $((t_pick - t_restart))) s" || echo "not picked again"))"
elif [[ -n "$how" ]]; then
  printf '%-48s %s\n' "time to return:" \
    "none (its port open after $(secs $((t_open - t_restart))) s, ready after $(secs $((t_ready - t_restart))) s, still ejected)"
else
  printf '%-48s %s\n' "time to return:" \
    "not applicable (never ejected; its port open after $(secs $((t_open - t_restart))) s, ready after $(secs $((t_ready - t_restart))) s)"
fi
# how it came back, as order-service's outlier detection logged it: a probe passed, or the registry
# dropped the dead instance ($DROP_REASON) and the ejection was forgotten before the
# replacement registered (a poll every 0.1 s can miss that short absence)
outlier_log=$(tail -n +"$log_from" "$DEMO_DIR/order-service.log" | grep 'outlier\.OutlierDetector' | sed 's/^.* : /  /' | head -n 6 || true)
if [[ -n "$t_return" ]] && grep -q 'forgotten while ejected: it is no longer listed' <<<"$outlier_log"; then
  printf '%-48s %s\n' "how it returned:" \
    "listed again once the replacement registered (the registry dropped the dead instance: $DROP_REASON$(
      [[ -n "$t_unlisted" ]] && echo ", $(secs $((t_unlisted - t_kill))) s after the kill"), and order-service forgot its ejection)"
elif [[ -n "$t_return" ]] && grep -q 'returns after' <<<"$outlier_log"; then
  printf '%-48s %s\n' "how it returned:" \
    "a probe passed $(secs $((t_return - t_open))) s after its port opened (the registry still listed the instance)"
elif [[ -n "$t_return" ]]; then
  printf '%-48s %s\n' "how it returned:" "back in rotation (see the outlier log below)"
elif [[ -n "$t_unlisted" ]]; then
  printf '%-48s %s\n' "" "(the registry dropped the dead instance $(secs $((t_unlisted - t_kill))) s after the kill)"
fi
echo "order-service's outlier log:"
echo "${outlier_log:-  (nothing)}"
echo "expected: no failed request; ejected within ${CRASH_EJECT_LIMIT} s of the kill; no attempt on it while ejected; back in rotation once its port is open again"
crash_alert=true
if $prometheus; then
  # since the kill only, and order-service's own ejection (its scrape target), not an earlier scenario's
  now_ms; since="$(((NOW - t_kill) / 1000 + 2))s"
  ejected=$(prom_query "max_over_time(atlas_outlier_ejected{service=\"user-service\",instance=\"127.0.0.1:${MGMT_OF[ORDER_PORT]}\"}[$since]) > 0")
  fired=$(prom_query "max_over_time(ALERTS{alertname=\"AtlasInstanceEjected\",alertstate=\"firing\",service=\"user-service\"}[$since])")
  printf '%-48s %s\n' "Prometheus: order-service's ejection scraped:" "$([[ "$ejected" =~ ^[1-9] ]] && echo yes || echo "no ($ejected)")"
  printf '%-48s %s\n' "Prometheus alert AtlasInstanceEjected fired:" "$([[ "$fired" =~ ^[1-9] ]] && echo yes || echo "no ($fired)")"
  [[ "$ejected" =~ ^[1-9] && "$fired" =~ ^[1-9] ]] || crash_alert=false
fi
if $crash_alert && [[ "${crash_failed:-x}" == 0 && "${crash_sent:-0}" -gt 0 && -n "$how" && "$after" == 0 && -n "$t_pick" ]] \
    && ((t_eject - t_kill <= CRASH_EJECT_LIMIT * 1000)); then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
  failed+=(crash)
fi
echo

# while the crash scenario's traffic is recent: Atlas removes Spring Cloud's per-instance series 5 to
# 10 minutes after an instance's last request (docs/observability.md)
if $prometheus; then
  echo "scenario: every query of the Grafana dashboard (docs/grafana/atlas-dashboard.json) against the demo's Prometheus"
  printf '%-44s %-10s %s\n' panel series query
  prom_pass=true
  mapfile -t prom_rows < <(jq -r '.panels[] | select(.targets != null) | .title as $t | .targets[] | [$t, .expr] | join("\u0001")' "$DASHBOARD")
  ((${#prom_rows[@]} > 0)) || { echo "no query found in $DASHBOARD"; prom_pass=false; }
  for row in "${prom_rows[@]}"; do
    title=${row%%$'\001'*}
    expr=${row#*$'\001'}
    query=${expr//\$service/.+}
    query=${query//\$__rate_interval/1m}
    count=$(prom_query "$query")
    printf '%-44s %-10s %s\n' "${title:0:44}" "$count" "${query:0:100}"
    [[ "$count" =~ ^[1-9] ]] || prom_pass=false
  done
  echo "expected: every query returns at least one series"
  if $prom_pass; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; failed+=(prometheus); fi
  say "dashboard: import docs/grafana/atlas-dashboard.json in Grafana (Dashboards → New → Import) and pick a Prometheus data source; alert rules: docs/prometheus/atlas-alerts.yml"
  # the dashboard's panels drawn from this run's data, where matplotlib is installed
  plotter=""
  for py in python3 /usr/bin/python3; do
    if "$py" -c 'import matplotlib' >/dev/null 2>&1; then plotter=$py; break; fi
  done
  if [[ -n "$plotter" ]]; then
    if "$plotter" "$ROOT/docs/grafana/plot-dashboard.py" "http://127.0.0.1:$PROM_PORT" "$PROM_STARTED" "$(date +%s)" \
      "$DEMO_DIR/dashboard.png" 2>"$DEMO_DIR/plot.log"; then
      say "the dashboard's panels over this run so far: .demo/dashboard.png"
    else
      say "could not draw the dashboard's panels (see .demo/plot.log)"
    fi
  else
    say "to draw the dashboard's panels from this run into .demo/dashboard.png, install matplotlib (apt-get install python3-matplotlib)"
  fi
  echo
fi


# --- cluster affinity --------------------------------------------------------------------------
AFF_CLUSTERS=(a a b b)
AFF_PORTS=()
for i in "${!AFF_CLUSTERS[@]}"; do
  pick_port
  AFF_PORTS+=("$PORT")
  # untagged: the affinity order-service (no baseline tags) sends untagged calls to these four only
  # shellcheck disable=SC2086
  start "user-service-${AFF_CLUSTERS[i]}$((i + 1))" "$DEMO_DIR/user-service-${AFF_CLUSTERS[i]}$((i + 1)).log" \
    env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" \
    --server.port="$PORT" "$(management_args "$PORT")" --sample.cluster="${AFF_CLUSTERS[i]}" --atlas.lifecycle.drain="$ROLL_DRAIN"
done
pick_port; AFF_ORDER_PORT=$PORT
# shellcheck disable=SC2086
start order-service-a "$DEMO_DIR/order-service-a.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" --server.port="$AFF_ORDER_PORT" "$(management_args "$AFF_ORDER_PORT")" \
  --sample.cluster=a --atlas.affinity.mode=threshold --atlas.lifecycle.drain="$NO_DRAIN" --atlas.warmup.enabled=false
say "affinity: starting user-services in clusters ${AFF_CLUSTERS[*]} (untagged) and order-service-a in cluster a ..."
for i in "${!AFF_CLUSTERS[@]}"; do
  wait_until "user-service-${AFF_CLUSTERS[i]}$((i + 1))" "readiness" http_ready "${AFF_PORTS[i]}"
done
wait_until order-service-a "readiness" http_ready "$AFF_ORDER_PORT"
aff_total=$((${#USER_TAGS[@]} + ${#AFF_CLUSTERS[@]}))
wait_until order-service-a "its DiscoveryClient to see $aff_total user-service instances" \
  sees_instances "$AFF_ORDER_PORT" "$aff_total"

spillovers() {
  curl -fsS --max-time 5 "http://127.0.0.1:${MGMT_OF[AFF_ORDER_PORT]}/actuator/prometheus" 2>/dev/null \
    | sed -n 's/^atlas_affinity_spillover_total{[^}]*service="user-service"[^}]*} \([0-9.E]*\)$/\1/p' \
    | head -n 1 || true
}

# affinity_table SCENARIO EXPECTED-CLUSTER : AFFINITY_CALLS calls through order-service-a, a table
# of calls per cluster, PASS when every call succeeded on the expected cluster
affinity_table() {
  local scenario=$1 want=$2 out calls fails i port count on_want=0 spill
  out=$(curl -fsS --max-time 300 \
    "http://127.0.0.1:$AFF_ORDER_PORT/traffic?client=feign&calls=$AFFINITY_CALLS&concurrency=$CONCURRENCY") || out=""
  calls=$(sed -n 's/.*"calls":\([0-9]*\).*/\1/p' <<<"$out")
  fails=$(sed -n 's/.*"failures":\([0-9]*\).*/\1/p' <<<"$out")
  spill=$(spillovers)
  echo
  echo "scenario: $scenario (order-service in cluster a, ${calls:-0} calls, ${fails:-?} failed)"
  printf '%-28s %-8s %8s\n' instance cluster share
  for i in "${!AFF_CLUSTERS[@]}"; do
    port=${AFF_PORTS[i]}
    count=$(count_of "$out" "$port")
    [[ "${AFF_CLUSTERS[i]}" != "$want" ]] || on_want=$((on_want + ${count:-0}))
    printf '%-28s %-8s %7.1f %%\n' "127.0.0.1:$port" "${AFF_CLUSTERS[i]}" \
      "$(awk -v c="${count:-0}" -v n="${calls:-0}" 'BEGIN { printf "%.1f", (n > 0) ? 100 * c / n : 0 }')"
  done
  echo "atlas.affinity.spillover{service=user-service} on order-service-a: ${spill:-0}"
  echo "expected: every call on cluster $want, no failed call"
  if [[ -n "$calls" && "$fails" == 0 && "$on_want" == "$calls" ]]; then
    echo "RESULT: PASS"
  else
    echo "RESULT: FAIL"
    failed+=("affinity-$want")
  fi
  AFF_SPILL=${spill:-0}
}

echo
say "affinity: user-service instances in clusters ${AFF_CLUSTERS[*]}; order-service-a prefers its own cluster a"
affinity_table "both a instances up" a
spill_before=$AFF_SPILL
for i in "${!AFF_CLUSTERS[@]}"; do
  [[ "${AFF_CLUSTERS[i]}" == a ]] && kill -TERM "$(pid_of "user-service-a$((i + 1))")" 2>/dev/null || true
done
say "SIGTERM to both cluster-a instances; waiting until order-service-a sees $((aff_total - 2)) instances"
wait_until order-service-a "its DiscoveryClient to see $((aff_total - 2)) user-service instances" \
  sees_instances "$AFF_ORDER_PORT" "$((aff_total - 2))"
affinity_table "no a instance left: spill-over" b
if ! awk -v a="$AFF_SPILL" -v b="$spill_before" 'BEGIN { exit !(a > b) }'; then
  echo "RESULT: FAIL (the spill-over counter did not grow: $spill_before -> $AFF_SPILL)"
  failed+=(affinity-spillover-counter)
fi
echo

# --- warmup ------------------------------------------------------------------------------------
pick_port; WARM_ORDER_PORT=$PORT
# shellcheck disable=SC2086
start order-service-warm "$DEMO_DIR/order-service-warm.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" --server.port="$WARM_ORDER_PORT" "$(management_args "$WARM_ORDER_PORT")" \
  --atlas.lifecycle.drain="$NO_DRAIN" --atlas.warmup.duration="${WARMUP}s"
wait_until order-service-warm "readiness" http_ready "$WARM_ORDER_PORT"
wait_until order-service-warm "its DiscoveryClient to see $((aff_total - 2)) user-service instances" \
  sees_instances "$WARM_ORDER_PORT" "$((aff_total - 2))"
# its first list: the two b instances, registered long enough ago to be warm
curl -fsS --max-time 60 "http://127.0.0.1:$WARM_ORDER_PORT/traffic?client=feign&calls=100" >/dev/null || true
pick_port; NEW_PORT=$PORT
# shellcheck disable=SC2086
start user-service-new "$DEMO_DIR/user-service-new.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" --server.port="$NEW_PORT" "$(management_args "$NEW_PORT")" \
  --sample.cluster=b --atlas.lifecycle.drain="$NO_DRAIN"
echo
say "warmup: a new untagged instance joins the two b instances; order-service-warm ramps it up over ${WARMUP} s (min 10 %)"
wait_until order-service-warm "its DiscoveryClient to see $((aff_total - 1)) user-service instances" \
  sees_instances "$WARM_ORDER_PORT" "$((aff_total - 1))"
seen=$SECONDS
printf '%-10s %-14s %s\n' "age (s)" "new instance" "expected (weight 1 x max(0.1, age/${WARMUP}) vs two warm ones)"
while ((SECONDS - seen <= WARMUP + 4)); do
  age=$((SECONDS - seen))
  out=$(curl -fsS --max-time 60 "http://127.0.0.1:$WARM_ORDER_PORT/traffic?client=feign&calls=400&concurrency=$CONCURRENCY" || true)
  count=$(count_of "$out" "$NEW_PORT")
  calls=$(sed -n 's/.*"calls":\([0-9]*\).*/\1/p' <<<"$out")
  awk -v a="$age" -v w="$WARMUP" -v c="${count:-0}" -v n="${calls:-0}" 'BEGIN {
    f = a / w; if (f < 0.1) f = 0.1; if (f > 1) f = 1
    printf "%-10d %5.1f %%        %5.1f %%\n", a, (n > 0) ? 100 * c / n : 0, 100 * f / (2 + f) }'
  sleep 3
done
echo

# --- load-aware strategies ---------------------------------------------------------------------
# A slow instance joins the three untagged ones (b3, b4 and the warmup scenario's new one); one
# order-service per strategy, warmup off (the slow instance is new: its share would follow its age)
pick_port; SLOW_PORT=$PORT
# shellcheck disable=SC2086
start user-service-slow "$DEMO_DIR/user-service-slow.log" \
  env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" --server.port="$SLOW_PORT" "$(management_args "$SLOW_PORT")" \
  --sample.cluster=b --sample.delay="$STRAT_DELAY" --atlas.lifecycle.drain="$NO_DRAIN"
STRAT_PORTS=()
for strategy in "${STRATEGIES[@]}"; do
  pick_port
  STRAT_PORTS+=("$PORT")
  # shellcheck disable=SC2086
  start "order-service-$strategy" "$DEMO_DIR/order-service-$strategy.log" \
    env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" --server.port="$PORT" "$(management_args "$PORT")" \
    --atlas.lifecycle.drain="$NO_DRAIN" --atlas.warmup.enabled=false \
    --atlas.services.user-service.loadbalancer.strategy="$strategy" $STRAT_ARGS
done
echo
say "strategies: a fourth untagged user-service answers every call $STRAT_DELAY late (--sample.delay=$STRAT_DELAY); one order-service per strategy (${STRATEGIES[*]}) ..."
strat_started=$SECONDS
# every user-service instance: the five of the fleet, b3, b4, the new one and the slow one
strat_total=$((${#USER_TAGS[@]} + ${#AFF_CLUSTERS[@]} - 2 + 2))
wait_until user-service-slow "readiness" http_ready "$SLOW_PORT"
for i in "${!STRATEGIES[@]}"; do
  wait_until "order-service-${STRATEGIES[i]}" "readiness" http_ready "${STRAT_PORTS[i]}"
  wait_until "order-service-${STRATEGIES[i]}" "its DiscoveryClient to see $strat_total user-service instances" \
    sees_instances "${STRAT_PORTS[i]}" "$strat_total"
done
say "  started in $((SECONDS - strat_started)) s; each order-service first sends $STRAT_WARMUP calls (not counted), as one that has been running"
if ((STRAT_WARMUP > 0)); then
  for i in "${!STRATEGIES[@]}"; do
    curl -fsS --max-time 120 \
      "http://127.0.0.1:${STRAT_PORTS[i]}/traffic?client=rest-client&calls=$STRAT_WARMUP&concurrency=4" >/dev/null || true
  done
fi
echo
echo "scenario: one slow instance (127.0.0.1:$SLOW_PORT, $STRAT_DELAY per answer) among 4 untagged ones; $STRAT_CALLS calls from $STRAT_CONCURRENCY threads per order-service (RestClient)"
printf '%-16s %6s %6s  %-13s %-9s %-6s %s\n' strategy calls failed "slow instance" expected result time
strat_pass=true
for i in "${!STRATEGIES[@]}"; do
  strategy=${STRATEGIES[i]} limit=${STRAT_LIMITS[i]}
  t=$SECONDS
  out=$(curl -fsS --max-time 300 \
    "http://127.0.0.1:${STRAT_PORTS[i]}/traffic?client=rest-client&calls=$STRAT_CALLS&concurrency=$STRAT_CONCURRENCY") || out=""
  calls=$(sed -n 's/.*"calls":\([0-9]*\).*/\1/p' <<<"$out")
  fails=$(sed -n 's/.*"failures":\([0-9]*\).*/\1/p' <<<"$out")
  count=$(count_of "$out" "$SLOW_PORT")
  share=$(awk -v c="${count:-0}" -v n="${calls:-0}" 'BEGIN { printf "%.1f", (n > 0) ? 100 * c / n : 0 }')
  if [[ -z "$calls" || "$fails" != 0 ]]; then
    verdict=FAIL strat_pass=false
  elif [[ -z "$limit" ]]; then
    verdict=-
  elif awk -v s="$share" -v l="$limit" 'BEGIN { exit !(s < l) }'; then
    verdict=PASS
  else
    verdict=FAIL strat_pass=false
  fi
  [[ -n "$limit" ]] && expected="< $limit %" || expected="~25 %"
  printf '%-16s %6s %6s  %11s %%  %-9s %-6s %d s\n' "$strategy" "${calls:-0}" "${fails:-?}" "$share" "$expected" "$verdict" \
    "$((SECONDS - t))"
done
echo "expected: no failed call; least-request under 20 % and peak-ewma under 10 % on the slow instance (the thresholds of LoadAwareStrategiesIT); weighted-random, the reference, about 1 in 4"
if $strat_pass; then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
  failed+=(strategies)
fi
say "  strategies scenario: $((SECONDS - strat_started)) s"
echo

# --- reported load -----------------------------------------------------------------------------
# A fleet of its own: the user-services and order-services so far are stopped (order-service calls
# user-service, whichever instances are registered); three fresh user-services, the last with half
# the capacity by CPU, and two order-services, weighted-round-robin and round robin
wrr_started=$SECONDS
say "reported load: stopping the user-services and order-services of the earlier scenarios ..."
stale=()
for i in "${!NAMES[@]}"; do
  [[ "${NAMES[i]}" == user-service* || "${NAMES[i]}" == order-service* ]] && stale+=("$i")
done
((${#stale[@]} == 0)) || stop_pids "${stale[@]}"
WRR_COSTS=(1x 1x 2x)
WRR_PORTS=()
for i in "${!WRR_COSTS[@]}"; do
  pick_port
  WRR_PORTS+=("$PORT")
  # shellcheck disable=SC2086
  start "user-service-cpu$i" "$DEMO_DIR/user-service-cpu$i.log" \
    env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$USER_RUN" --server.port="$PORT" "$(management_args "$PORT")" \
    --sample.cpu-cost="${WRR_COSTS[i]}" --atlas.lifecycle.drain="$NO_DRAIN"
done
WRR_ORDER_PORTS=()
for strategy in weighted-round-robin smooth-round-robin; do
  pick_port
  WRR_ORDER_PORTS+=("$PORT")
  # shellcheck disable=SC2086
  start "order-service-$strategy" "$DEMO_DIR/order-service-$strategy.log" \
    env "${REGISTRY_ENV[@]}" java $DEMO_JAVA_OPTS -jar "$ORDER_RUN" --server.port="$PORT" "$(management_args "$PORT")" \
    --atlas.lifecycle.drain="$NO_DRAIN" --atlas.warmup.enabled=false \
    --atlas.services.user-service.loadbalancer.strategy="$strategy" \
    --atlas.services.user-service.loadbalancer.weighted-round-robin.blackout-period="$WRR_BLACKOUT" $STRAT_ARGS
done
for i in "${!WRR_COSTS[@]}"; do
  wait_until "user-service-cpu$i" "readiness" http_ready "${WRR_PORTS[i]}"
done
WRR_STRATEGIES=(weighted-round-robin smooth-round-robin)
for s in 0 1; do
  wait_until "order-service-${WRR_STRATEGIES[s]}" "readiness" http_ready "${WRR_ORDER_PORTS[s]}"
  wait_until "order-service-${WRR_STRATEGIES[s]}" "its DiscoveryClient to see ${#WRR_COSTS[@]} user-service instances" \
    sees_instances "${WRR_ORDER_PORTS[s]}" "${#WRR_COSTS[@]}"
done
say "  started in $((SECONDS - wrr_started)) s; each order-service first sends $WRR_WARMUP calls (not counted): the reports' blackout ($WRR_BLACKOUT) and windows"
for port in "${WRR_ORDER_PORTS[@]}"; do
  curl -fsS --max-time 300 \
    "http://127.0.0.1:$port/traffic?client=rest-client&calls=$WRR_WARMUP&concurrency=$WRR_CONCURRENCY" >/dev/null || true
done
echo
echo "scenario: three user-services costing 5, 5 and 10 ms of CPU per user (--sample.cpu-cost=1x, 1x, 2x), reporting their load; $WRR_CALLS calls from $WRR_CONCURRENCY threads per order-service (RestClient)"
printf '%-22s %6s %6s  %-26s %-14s %-6s\n' strategy calls failed "shares 1x / 1x / 2x" "2x expected" result
wrr_pass=true
for s in 0 1; do
  strategy=${WRR_STRATEGIES[s]}
  out=$(curl -fsS --max-time 300 \
    "http://127.0.0.1:${WRR_ORDER_PORTS[s]}/traffic?client=rest-client&calls=$WRR_CALLS&concurrency=$WRR_CONCURRENCY") || out=""
  calls=$(sed -n 's/.*"calls":\([0-9]*\).*/\1/p' <<<"$out")
  fails=$(sed -n 's/.*"failures":\([0-9]*\).*/\1/p' <<<"$out")
  shares=()
  for port in "${WRR_PORTS[@]}"; do
    count=$(count_of "$out" "$port")
    shares+=("$(awk -v c="${count:-0}" -v n="${calls:-0}" 'BEGIN { printf "%.1f", (n > 0) ? 100 * c / n : 0 }')")
  done
  if [[ -z "$calls" || "$fails" != 0 ]]; then
    verdict=FAIL wrr_pass=false
  elif [[ $s == 1 ]]; then
    verdict=-
  elif awk -v x="${shares[2]}" -v t="$WRR_TOLERANCE" 'BEGIN { exit !(x >= 20 - t && x <= 20 + t) }'; then
    verdict=PASS
  else
    verdict=FAIL wrr_pass=false
  fi
  expected=$([[ $s == 0 ]] && echo "20 ± $WRR_TOLERANCE %" || echo "~33 %")
  printf '%-22s %6s %6s  %-26s %-14s %-6s\n' "$strategy" "${calls:-0}" "${fails:-?}" "${shares[0]} / ${shares[1]} / ${shares[2]} %" \
    "$expected" "$verdict"
done
echo "reported weights in force (order-service's /actuator/atlas/user-service, reportedWeight per port):"
curl -fsS --max-time 10 "http://127.0.0.1:${MGMT_OF[${WRR_ORDER_PORTS[0]}]}/actuator/atlas/user-service" 2>/dev/null |
  grep -o '"port":[0-9]*\|"reportedWeight":[0-9.null]*' | paste -d' ' - - | sed 's/^/  /' || true
echo "expected: no failed call; weighted-round-robin gives the 2x instance its share of the capacity, 0.5 / 2.5 = 20 %; round robin, the reference, a third"
if $wrr_pass; then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
  failed+=(reported-load)
fi
say "  reported-load scenario: $((SECONDS - wrr_started)) s"
echo

# --- the logs ----------------------------------------------------------------------------------
# Every WARN and ERROR the samples logged (user-services, order-services, the gateway, and the
# embedded ZooKeeper; a Nacos or Eureka server's log is the server's) must be one a scenario provokes on
# purpose, declared here with expect_log; a line of the JVM's own (e.g. "WARNING: ...", "OpenJDK 64-Bit
# Server VM warning: ...", "Exception in thread ...") or of SLF4J's or Logback's counts as unexpected too.
# A service log without a single INFO line in Spring Boot's format fails the check (its format was
# changed, so nothing in it could be read), and so does an embedded ZooKeeper's log with INFO lines (not
# its own quiet configuration). Without --keep the services are stopped first, so that their shutdown is
# checked as well: one that has to be killed fails the check.
LOG_WHY=() LOG_FILES=() LOG_LINES=()
# expect_log WHY FILES LINE : WARN/ERROR lines matching the extended regex LINE in the logs whose
# names match the extended regex FILES are provoked by the scenario WHY
expect_log() { LOG_WHY+=("$1"); LOG_FILES+=("$2"); LOG_LINES+=("$3"); }
expect_log "gray: X-Service-Version v3, a tag no instance runs, falls back to v1 (both hops)" \
  '^(order-service|user-service-[0-9]+)[.]log$' "[.]GrayRouter +: No instance of service 'user-service' has tag 'v3'"
expect_log "gateway: the lane rules want v2, and order-service has no v2 instance (it passes the lane on)" \
  '^gateway[.]log$' "[.]GrayRouter +: No instance of service 'order-service' has tag 'v2'"
expect_log "affinity: cluster a's instances stopped, calls spill over to b" \
  '^order-service-a[.]log$' \
  "[.]ClusterAffinity +: Service 'user-service': (cluster 'a' has 0 usable|no instance is in the caller's cluster 'a')"
if [[ "$registry" == eureka ]]; then
  # Lines of the Eureka client itself (Netflix's), not of Atlas or the samples: its task supervisor
  # refuses to reschedule a task once the client shuts down, and says so when a registry fetch or a
  # lease renewal outlasts its interval (2 s in the 'eureka' profile) on this machine's busy cores.
  expect_log "eureka: its client's task supervisor (a task refused as it shuts down, a fetch or renewal over 2 s)" \
    '[.]log$' "c[.]netflix[.]discovery[.]TimedSupervisorTask +: task supervisor (shutting down, can't accept the task|timed out)"
  # gateway_sees' first request for order-service can reach the gateway before its first Eureka fetch
  # that lists one (Eureka's callers learn of new instances at their next fetch)
  expect_log "eureka: the demo's first request for order-service came before the gateway's fetch listed one" \
    '^gateway[.]log$' "[.]SnapshotBalancer +: No instance available for service 'order-service'$"
fi
# an INFO line in Spring Boot's default format
BOOT_INFO='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]+ +INFO [0-9]+ --- '
if ! $keep && ((${#PIDS[@]} > 0)); then
  say "stopping ${#PIDS[@]} process(es) before the log check: ${NAMES[*]}"
  stop_all
fi
echo
echo "scenario: logs; every WARN and ERROR line of the samples (.demo/user-service*.log, order-service*.log, gateway.log, registry.log), by the scenario that provokes it"
log_unexpected=()
log_counts=()
unread=()
for log in "$DEMO_DIR"/user-service*.log "$DEMO_DIR"/order-service*.log "$DEMO_DIR"/gateway.log "$DEMO_DIR"/registry.log; do
  [[ -f "$log" ]] || continue
  file=${log##*/}
  if [[ "$registry" == eureka && "$file" == registry.log ]]; then
    continue
  fi
  if [[ "$file" != registry.log ]] && ! grep -q -E -e "$BOOT_INFO" "$log"; then
    unread+=("$file")
  elif [[ "$file" == registry.log ]] && grep -q -E -e '^[0-9:.]+ +(\[[^]]*\] +)?(DEBUG|INFO) ' "$log"; then
    # the embedded ZooKeeper logs WARN and ERROR only (atlas-registry-logback.xml): INFO lines mean
    # another configuration, whose lines this check may not read
    unread+=("$file")
  fi
  while IFS= read -r line; do
    reason=-1
    for i in "${!LOG_WHY[@]}"; do
      if [[ "$file" =~ ${LOG_FILES[i]} ]] && grep -q -E -e "${LOG_LINES[i]}" <<<"$line"; then
        reason=$i
        break
      fi
    done
    if ((reason >= 0)); then
      log_counts[$reason]=$(( ${log_counts[$reason]:-0} + 1 ))
    else
      log_unexpected+=("$file: $line")
    fi
  done < <(grep -E -i -e '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]+ +(WARN|ERROR) ' -e '^[0-9:.]+ +(\[[^]]*\] +)?(WARN|ERROR) ' \
    -e '\|-(WARN|ERROR) in ' -e '^(WARNING|ERROR)\b' -e '^Exception in thread ' -e 'VM warning' -e '^SLF4J' \
    -e '\[(warning|error)\]' -e '^Could not stop' "$log" || true)
done
for i in "${!LOG_WHY[@]}"; do printf '%5d  %s\n' "${log_counts[$i]:-0}" "${LOG_WHY[i]}"; done
stray=()
for file in "$DEMO_DIR"/*.error; do
  if [[ -e "$file" ]]; then stray+=("${file#"$ROOT"/}"); fi
done
printf '%5d  unexpected WARN/ERROR lines\n' "${#log_unexpected[@]}"
for line in "${log_unexpected[@]:0:20}"; do printf '       %s\n' "${line:0:400}"; done
((${#log_unexpected[@]} <= 20)) || echo "       ... and $((${#log_unexpected[@]} - 20)) more"
printf '%5d  logs without a line in Spring Boot'"'"'s format%s\n' "${#unread[@]}" "$( ((${#unread[@]} == 0)) || printf ': %s' "${unread[*]}")"
printf '%5d  services killed after 20 s without stopping on SIGTERM%s\n' "${#KILLED[@]}" "$( ((${#KILLED[@]} == 0)) || printf ': %s' "${KILLED[*]}")"
printf '%5d  stray error files%s\n' "${#stray[@]}" "$( ((${#stray[@]} == 0)) || printf ': %s' "${stray[*]}")"
echo "expected: no unexpected WARN or ERROR line, no log that could not be read, no killed service, no stray error file"
if ((${#log_unexpected[@]} == 0 && ${#unread[@]} == 0 && ${#KILLED[@]} == 0 && ${#stray[@]} == 0)); then
  echo "RESULT: PASS"
else
  echo "RESULT: FAIL"
  failed+=(logs)
fi
echo

if $keep; then
  say "services are still running: try"
  say "  curl http://127.0.0.1:$ORDER_PORT/orders/1?client=feign"
  say "  curl -H 'X-Service-Version: v2' http://127.0.0.1:$ORDER_PORT/chain/1"
  say "  curl -H 'X-User-Group: beta' http://127.0.0.1:$GATEWAY_PORT/api/orders/chain/1   (through the gateway)"
  say "  echo $CANARY_KEY=30 > $RULES_FILE; curl -X POST http://127.0.0.1:${MGMT_OF[RULES_PORT]}/actuator/refresh"
  say "  curl 'http://127.0.0.1:$RULES_PORT/gray/report?path=orders&calls=1000&expect-share=v2:30:3'"
  say "press Ctrl-C to stop them"
  while true; do sleep 1; done
fi

say "run time: $((SECONDS / 60)) min $((SECONDS % 60)) s$($build && echo ', the build included')"
if ((${#failed[@]} > 0)); then
  say "FAIL for: ${failed[*]}"
  exit 1
fi
say "PASS: all ${#CLIENTS[@]} clients follow the weights ${USER_WEIGHTS[*]:0:3} within $TOLERANCE points; gray lanes hold on both hops (untagged → v1, v2 → v2, v3 → v1), the canary sends ${CANARY_PERCENT} % ± ${CANARY_TOLERANCE} to v2, the gateway decides lanes at the edge (header, lane rules, a sticky canary per user) and three hops follow them, a canary moved through ${CANARY_STEPS// / → } % by /actuator/refresh follows within ${CANARY_STEP_TOLERANCE} points (4 standard deviations where more) with traffic flowing (no failed call), a rolling restart under $ROLL_CONCURRENCY concurrent GETs through order-service and as many through the gateway failed no request, neither did a crash (the dead instance ejected within $CRASH_EJECT_LIMIT s, then no attempt on it until it was back), cluster affinity keeps calls in a, then spills over to b (counted), least-request and peak-ewma keep most calls off a slow instance, weighted-round-robin gives an instance of half the capacity its share by the load it reports, and the samples logged no WARN or ERROR beyond those the scenarios provoke; the warmup ramp is printed above"
