#!/usr/bin/env bash
# Two commands timed as whole processes by /usr/bin/time -v, A B A B ..., REPEATS pairs
# (default 9), their output thrown away: the median of each one's wall seconds (read with
# date's nanoseconds around the run: time -v's are hundredths), user + system seconds, peak
# RSS and context switches (voluntary + involuntary), and the A / B ratio of the wall
# medians. A command is one string run by sh; an environment variable may lead it. A
# command that fails stops the script, naming it.
#   bench/ab.sh 'LANCELET_THREADS=2 build/release/lancelet sql --db d "SELECT ..."' 'OTHER'
set -euo pipefail
REPEATS=${REPEATS:-9}
if [[ $# -ne 2 ]]; then
  echo "usage: $0 'COMMAND A' 'COMMAND B'" >&2
  exit 2
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
for ((r = 0; r < REPEATS; r++)); do
  for side in a b; do
    command=$([[ $side == a ]] && echo "$1" || echo "$2")
    t0=$(date +%s%N)
    if ! /usr/bin/time -v -o "$log/$side.$r" sh -c "$command >/dev/null 2>&1"; then
      echo "$side failed: $command" >&2
      exit 1
    fi
    t1=$(date +%s%N)
    echo "Wall nanoseconds: $((t1 - t0))" >>"$log/$side.$r"
  done
done
node -e '
  const fs = require("fs");
  const [dir, repeats] = process.argv.slice(1);
  const field = (text, name) => { const m = text.match(new RegExp(name + ": (.*)")); return m ? m[1].trim() : ""; };
  const median = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const stats = {};
  for (const side of ["a", "b"]) {
    const runs = [];
    for (let r = 0; r < Number(repeats); r++) {
      const t = fs.readFileSync(`${dir}/${side}.${r}`, "utf8");
      runs.push({
        wall: Number(field(t, "Wall nanoseconds")) / 1e9,
        cpu: Number(field(t, "User time \\(seconds\\)")) + Number(field(t, "System time \\(seconds\\)")),
        rss: Number(field(t, "Maximum resident set size \\(kbytes\\)")) / 1024,
        switches: Number(field(t, "Voluntary context switches")) + Number(field(t, "Involuntary context switches")),
      });
    }
    stats[side] = Object.fromEntries(["wall", "cpu", "rss", "switches"].map((k) => [k, median(runs.map((x) => x[k]))]));
    const s = stats[side];
    console.log(`${side.toUpperCase()}: wall ${s.wall.toFixed(3)} s, cpu ${s.cpu.toFixed(3)} s, peak ${s.rss.toFixed(1)} MiB, ` +
                `${s.switches} context switches (medians of ${repeats})`);
  }
  console.log(`A / B wall: ${(stats.a.wall / stats.b.wall).toFixed(2)}`);
' "$log" "$REPEATS"
