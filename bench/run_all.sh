#!/usr/bin/env bash
# ./run bench: every benchmark, side by side with the reference where there is one.
set -euo pipefail
BUILD=${1:-build/release}
bash bench/scan_compare.sh "$BUILD"
bash bench/update_compare.sh "$BUILD"
bash bench/overlay_read.sh "$BUILD"
bash bench/overlay_history.sh "$BUILD"
bash bench/census_compare.sh "$BUILD"
bash bench/projection_compare.sh "$BUILD"
bash bench/writer_sizes.sh "$BUILD"
bash bench/write_compare.sh "$BUILD"
bash bench/index_compare.sh "$BUILD"
bash bench/compaction_compare.sh "$BUILD"
bash bench/update_modes.sh "$BUILD"
bash bench/loader_compare.sh "$BUILD"
bash bench/sql_compare.sh "$BUILD"
