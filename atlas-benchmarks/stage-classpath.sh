# Sourced by run.sh and compare.sh. stage_classpath TREE INTO copies what TREE's build made for the
# benchmarks (atlas-benchmarks/target/classes and the jars of the reactor named in classpath.txt) into
# INTO, so that a run does not depend on the tree afterwards (a concurrent `mvn clean` cannot pull
# classes from under a running JMH fork), and prints the classpath to run with.
stage_classpath() {
  local tree=$1 into=$2 classpath entry entries
  mkdir -p "$into"
  cp -r "$tree/atlas-benchmarks/target/classes" "$into/classes"
  classpath="$into/classes"
  IFS=: read -ra entries < "$tree/atlas-benchmarks/target/classpath.txt" || true  # no trailing newline
  for entry in "${entries[@]}"; do
    if [[ "$entry" == "$tree"/* ]]; then
      cp "$entry" "$into/"
      classpath+=":$into/$(basename "$entry")"
    else
      classpath+=":$entry"
    fi
  done
  echo "$classpath"
}
