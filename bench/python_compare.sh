#!/bin/sh
# lancelet against pylance 14 from Python (bench/python_compare.py): to_table() into pyarrow
# and a DuckDB aggregate. Needs the build (PYTHONPATH=build/release/python) and a venv with
# pyarrow, pylance and duckdb (./run setup's .venv, or PYTHON=...).
#   bench/python_compare.sh [DIR] [ROWS] [RUNS]
set -e
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-/tmp/lancelet_python_compare}
mkdir -p "$dir"
python=${PYTHON:-$here/.venv/bin/python}
PYTHONPATH="$here/build/release/python" exec "$python" "$here/bench/python_compare.py" "$dir" "${2:-1000000}" "${3:-5}"
