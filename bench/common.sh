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
