#!/usr/bin/env bash
# Atlas benchmarks. Builds what it needs with ./mvnw, runs every pick benchmark (Atlas, Spring Cloud
# LoadBalancer, Spring Cloud Alibaba's NacosLoadBalancer; 10 to 10,000 instances; 1 and 2 threads) in ONE
# JMH invocation with -prof gc, then the seeded quality simulation, and prints the results as Markdown.
#
#   atlas-benchmarks/run.sh            full run: 2 forks x (4 x 1 s warmup, 2 x 1 s measurement) per benchmark
#                                      (80 benchmarks; 37.5 minutes on 2 cores with the build)
#   atlas-benchmarks/run.sh --smoke    every benchmark once, in-process, 10 ms each (figures meaningless)
#   atlas-benchmarks/run.sh [--smoke] ARGS...
#                                      ARGS go to JMH after the defaults: a benchmark regex and/or
#                                      -p instances=N, e.g.  run.sh -p instances=100 'Picks1Thread'
#
# JMH's own log goes to atlas-benchmarks/target/results/jmh.log, progress to stderr; stdout is Markdown.
# Run it on an otherwise idle machine: the load average is printed so that you can tell.
set -euo pipefail

cd "$(dirname "$0")/.."
mode=full
if [[ "${1:-}" == "--smoke" ]]; then
  mode=smoke
  shift
fi
command_line="atlas-benchmarks/run.sh${*:+ }$*"
[[ "$mode" == smoke ]] && command_line="atlas-benchmarks/run.sh --smoke${*:+ }$*"

java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
out=atlas-benchmarks/target/results
started=$(date -u '+%Y-%m-%d %H:%M UTC')
start_seconds=$SECONDS
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

echo ">> building the engine and the benchmarks (./mvnw -B -q -pl atlas-benchmarks -am package -DskipTests)" >&2
./mvnw -B -q -pl atlas-benchmarks -am package -DskipTests >&2
mkdir -p "$out"

# Run from a private copy of what this working tree built (the benchmark classes, the engine jar), so that a
# concurrent build in the same tree (mvn clean) cannot pull classes from under a running JMH fork.
source atlas-benchmarks/stage-classpath.sh
stage=$(mktemp -d "${TMPDIR:-/tmp}/atlas-benchmarks.XXXXXX")
trap 'rm -rf "$stage"' EXIT
classpath=$(stage_classpath "$PWD" "$stage")

if [[ "$mode" == full ]]; then
  jmh_options=(-f 2 -wi 4 -w 1s -i 2 -r 1s -prof gc)
else
  jmh_options=(-f 0 -wi 0 -i 1 -r 10ms -prof gc)
fi
jmh_options+=(-rf json -rff "$out/jmh-result.json" "$@")

echo ">> JMH ${jmh_options[*]}" >&2
"$java_bin" -cp "$classpath" dev.atlas.benchmarks.BenchmarkMain --markdown "$out/picks.md" "${jmh_options[@]}" 2>&1 \
  | tee "$out/jmh.log" \
  | { grep --line-buffered -E '^# (Run progress|Benchmark:|Parameters)' >&2 || true; }
if [[ ! -s "$out/picks.md" ]]; then
  echo "JMH failed; see $out/jmh.log" >&2
  exit 1
fi

echo ">> quality simulation" >&2
"$java_bin" -cp "$classpath" dev.atlas.benchmarks.QualitySimulation > "$out/quality.md"

elapsed=$((SECONDS - start_seconds))
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)

{
  suffix=""
  [[ "$mode" == smoke ]] && suffix=" (smoke mode: figures are meaningless)"
  echo "### Run of ${started}${suffix}"
  echo
  echo "- machine: $(nproc) cores${cpu:+ ($cpu)}, $(uname -sr); load average $load_before before, $load_after after"
  echo "- JDK: $("$java_bin" -version 2>&1 | tr '\n' ' ' | sed 's/ *$//')"
  echo "- command: \`$command_line\` (JMH options: \`${jmh_options[*]}\`)"
  echo "- wall time, build included: $((elapsed / 60)) min $((elapsed % 60)) s"
  echo
  cat "$out/picks.md"
  cat "$out/quality.md"
} | tee "$out/report.md"
