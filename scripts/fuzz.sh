#!/usr/bin/env bash
# Runs libFuzzer targets one after another (one process at a time, niced), each for
# SECONDS, starting from fuzz/corpus/<target> and any seed folder, and appends the
# final figures to build/fuzz-work/fuzz.log. New inputs go to build/fuzz-work/<target>;
# crashes, leaks and timeouts to build/fuzz-work/artifacts/.
#
#   scripts/fuzz.sh SECONDS [SEED_ROOT] target...
#   (SEED_ROOT: the folder LANCELET_FUZZ_CORPUS_DIR made, e.g. /tmp/corpus)
#
# Afterwards fold what was found into the kept corpus (see docs/fuzzing.md):
#   build/fuzz/fuzz/fuzz_<target> -merge=1 fuzz/corpus/<target> build/fuzz-work/<target>
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=$1; shift
seed_root=""
if [[ $# -gt 0 && -d $1 ]]; then seed_root=$1; shift; fi
work=build/fuzz-work
mkdir -p "$work/artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for target in "$@"; do
  mkdir -p "$work/$target" "fuzz/corpus/$target"
  dirs=("$work/$target" "fuzz/corpus/$target")
  [[ -n $seed_root && -d $seed_root/$target ]] && dirs+=("$seed_root/$target")
  # The container target also starts from the 2.1 / 2.2 files.
  [[ -n $seed_root && $target == lance_file && -d $seed_root/lance_file_v21 ]] && dirs+=("$seed_root/lance_file_v21")
  start=$(date +%s)
  nice -n 19 build/fuzz/fuzz/fuzz_"$target" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/${target}-" "${dirs[@]}" >"$work/$target.out" 2>&1
  rc=$?
  {
    echo "== $target: exit $rc after $(($(date +%s) - start)) s ($(date -u +%H:%M:%S))"
    grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$work/$target.out" | tail -1
    grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' "$work/$target.out"
    grep -E 'ERROR: |SUMMARY: |runtime error|Test unit written' "$work/$target.out" | head -5
  } >>"$work/fuzz.log"
done
exit 0  # the last grep finds nothing when a run is clean
