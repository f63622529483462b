# Sourced by the side-by-side scripts: strict mode, the build directory (first argument),
# the data directory (WORK, kept between runs) and the lancelet driver.
set -euo pipefail
BUILD=${1:-build/release}
ROWS=${ROWS:-1000000}
WORK=${WORK:-bench-data}
TOOL="$BUILD/bench/scan_tool"
mkdir -p "$WORK"
