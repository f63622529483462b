# Sourced by the side-by-side scripts: strict mode, the build directory (first argument),
# the data directory (WORK, kept between runs) and the lancelet driver.
set -euo pipefail
BUILD=${1:-build/release}
ROWS=${ROWS:-1000000}
WORK=${WORK:-bench-data}
TOOL="$BUILD/bench/scan_tool"
mkdir -p "$WORK"

# medians LABEL NAME_A NAME_B "TIMES_A" "TIMES_B": one line with the median of each list
# of nanosecond timings (space-separated) and the ratio A / B.
medians() {
  node -e '
    const [label, na, nb, a, b] = process.argv.slice(1);
    const median = (s) => { const xs = s.split(" ").map(Number).sort((x, y) => x - y); return xs[Math.floor(xs.length / 2)] / 1e9; };
    const ma = median(a), mb = median(b);
    console.log(`${label}: ${na} ${ma.toFixed(3)} s, ${nb} ${mb.toFixed(3)} s, ${(ma / mb).toFixed(2)}x`);
  ' "$@"
}

# whole_process LABEL NAME_A NAME_B A B ARGS...: runs "$LANCELET ARGS..." REPEATS times for
# each of two datasets, A and B alternating, with DS in ARGS standing for the dataset (a
# dataset written DIR@V is read at version V), and prints the medians and their ratio.
whole_process() {
  local label=$1 name_a=$2 name_b=$3 a=$4 b=$5
  shift 5
  local -a times_a=() times_b=()
  for ((r = 0; r < REPEATS; r++)); do
    for side in a b; do
      local spec=$b
      [[ $side == a ]] && spec=$a
      local args=() extra=()
      [[ $spec == *@* ]] && extra=(--version "${spec##*@}")
      for x in "$@"; do [[ $x == DS ]] && args+=("${spec%@*}") || args+=("$x"); done
      local t0 t1
      t0=$(date +%s%N)
      "$LANCELET" "${args[@]}" "${extra[@]}" >/dev/null
      t1=$(date +%s%N)
      [[ $side == a ]] && times_a+=($((t1 - t0))) || times_b+=($((t1 - t0)))
    done
  done
  medians "$label" "$name_a" "$name_b" "${times_a[*]}" "${times_b[*]}"
}

# same_page_cache DIR...: drops every file under DIR from the page cache and reads it back,
# so that datasets compared side by side sit in memory alike. How a file entered the cache
# (written, read back by readahead, evicted in part) decides the size of its cached folios,
# and that alone moved a warm scan by 15%.
same_page_cache() {
  find "$@" -type f -exec dd iflag=nocache count=0 status=none if={} \; -exec cat {} + >/dev/null
}
