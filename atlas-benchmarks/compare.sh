#!/usr/bin/env bash
# Side-by-side JMH run of two versions of Atlas: BASE (a git ref, e.g. the previous main) and this
# working tree, in ONE invocation of this script, rounds interleaved (base, this, base, this, ...)
# so that both see the same machine in the same minutes. Prints Markdown: per benchmark and
# parameter, the mean of each side, the ratio this/base and the allocation per operation.
#
#   atlas-benchmarks/compare.sh BASE_REF [ROUNDS] [JMH args...]
#
# Defaults: 3 rounds; each round runs, for each side, one fork of
#   -wi 4 -w 1s -i 3 -r 1s -prof gc 'Picks1Thread.(springRoundRobin|atlasChain|atlasChainTagged)$'
#   -p instances=100,10000
# JMH args after ROUNDS replace the benchmark selection and parameters.
# Both sides must have the benchmark classes and methods selected. Run on an otherwise idle
# machine: the load average before and after is printed. Needs git, a JDK and the Maven wrapper.
set -euo pipefail

cd "$(dirname "$0")/.."
base_ref=${1:?usage: atlas-benchmarks/compare.sh BASE_REF [ROUNDS] [JMH args...]}
rounds=${2:-3}
if [[ ! "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "ROUNDS must be a whole number >= 1, was '$rounds' (usage: compare.sh BASE_REF [ROUNDS] [JMH args...])" >&2
  exit 2
fi
shift $(( $# >= 2 ? 2 : 1 ))
selection=("$@")
if [[ ${#selection[@]} -eq 0 ]]; then
  selection=('Picks1Thread.(springRoundRobin|atlasChain|atlasChainTagged)$' -p instances=100,10000)
fi
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
work=$(mktemp -d "${TMPDIR:-/tmp}/atlas-compare.XXXXXX")
base_tree="$work/base"
trap 'git worktree remove --force "$base_tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

base_commit=$(git rev-parse --short "$base_ref")
this_commit="$(git rev-parse --short HEAD)$([[ -z "$(git status --porcelain)" ]] || echo '+changes')"

source atlas-benchmarks/stage-classpath.sh

echo ">> building base $base_commit" >&2
git worktree add --detach "$base_tree" "$base_ref" >/dev/null
(cd "$base_tree" && ./mvnw -B -q -pl atlas-benchmarks -am package -DskipTests -Dspring-javaformat.skip=true >&2)
base_cp=$(stage_classpath "$base_tree" "$work/base-run")
echo ">> building this tree $this_commit" >&2
./mvnw -B -q -pl atlas-benchmarks -am package -DskipTests -Dspring-javaformat.skip=true >&2
this_cp=$(stage_classpath "$PWD" "$work/this-run")

load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
for ((round = 1; round <= rounds; round++)); do
  order="base this"
  (( round % 2 == 0 )) && order="this base"   # alternate which side runs first
  for side in $order; do
    cp_var="${side}_cp"
    echo ">> round $round/$rounds: $side" >&2
    "$java_bin" -cp "${!cp_var}" org.openjdk.jmh.Main -f 1 -wi 4 -w 1s -i 3 -r 1s -prof gc \
      -rf csv -rff "$work/$side-$round.csv" "${selection[@]}" > "$work/$side-$round.log" 2>&1 \
      || { echo "JMH failed on $side; see below" >&2; tail -20 "$work/$side-$round.log" >&2; exit 1; }
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

# CSV columns: "Benchmark","Mode","Threads","Samples","Score","Score Error (99.9%)","Unit",params...
# Rows of the time score have Benchmark = the method; gc.alloc.rate.norm rows end in ":gc.alloc.rate.norm".
echo "### Side by side: base \`$base_commit\` against \`$this_commit\`"
echo
echo "- machine: $(nproc) cores, $(uname -sr); JDK: $("$java_bin" -version 2>&1 | head -1)"
echo "- load average $load_before before, $load_after after"
echo "- $rounds rounds, interleaved (base first in odd rounds, this tree first in even ones); each side per round: one fork, 4 x 1 s warmup, 3 x 1 s measurement, \`-prof gc\`"
echo "- selection: \`${selection[*]}\`"
echo
echo "| benchmark | params | base ns/op | this ns/op | this/base (mean) | this/base per round | base B/op | this B/op |"
echo "|---|---|---:|---:|---:|---|---:|---:|"
awk -F, '
  function unq(s) { gsub(/"/, "", s); return s }
  FNR == 1 {
    side = (FILENAME ~ /\/base-[0-9]+\.csv$/) ? "base" : "this"
    round = FILENAME; sub(/^.*-/, "", round); sub(/\.csv$/, "", round); rounds[round] = 1
    next
  }
  {
    # JMH ends CSV lines with \r\n: without this the last parameter keeps the \r and breaks the table row.
    sub(/\r$/, "")
    name = unq($1) " [" unq($2) ", " unq($3) " thr]"; params = ""
    for (i = 8; i <= NF; i++) params = params (params == "" ? "" : " ") unq($i)
    score = unq($5) + 0
    if (name ~ /:gc\.alloc\.rate\.norm /) {
      sub(/:gc\.alloc\.rate\.norm /, " ", name); key = name SUBSEP params
      alloc[side, key] += score; nalloc[side, key]++
    }
    else if (name !~ /:/ && unq($7) == "ns/op") {
      key = name SUBSEP params; keys[key] = 1
      time[side, key] += score; ntime[side, key]++; byround[side, key, round] = score
    }
  }
  END {
    for (key in keys) {
      if (!ntime["base", key] || !ntime["this", key]) continue
      split(key, part, SUBSEP)
      short = part[1]; sub(/^.*\.benchmarks\./, "", short)
      b = time["base", key] / ntime["base", key]; t = time["this", key] / ntime["this", key]
      ba = (nalloc["base", key] ? alloc["base", key] / nalloc["base", key] : 0)
      ta = (nalloc["this", key] ? alloc["this", key] / nalloc["this", key] : 0)
      per = ""
      for (r = 1; (r "") in rounds; r++) {
        if ((("base", key, r "") in byround) && (("this", key, r "") in byround)) {
          per = per (per == "" ? "" : ", ") sprintf("%.2f", byround["this", key, r ""] / byround["base", key, r ""])
        }
      }
      printf "| %s | %s | %.1f | %.1f | %.3f | %s | %.0f | %.0f |\n", short, part[2], b, t, t / b, per, ba, ta
    }
  }' "$work"/base-*.csv "$work"/this-*.csv | sort
