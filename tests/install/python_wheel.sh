#!/usr/bin/env bash
# python_wheel: the wheel that `pip wheel .` builds (pyproject.toml, scikit-build-core),
# installed in a fresh virtual environment, passes python/tests run from outside the
# checkout with no PYTHONPATH, and its lancelet.__version__ is the project's version.
#   python_wheel.sh SOURCE_DIR WORK_DIR BUILD_PYTHON VERSION CLI
# BUILD_PYTHON has the build backend (.venv: ./run setup); nothing is fetched (--no-index).
# The fresh environment sees Debian's packages (--system-site-packages) and, through a .pth
# file, BUILD_PYTHON's site-packages, where the test-only packages are.
set -euo pipefail
src=$1 work=$2 build_python=$3 version=$4 cli=$5
say() { echo "python_wheel: $*"; }
mkdir -p "$work"
rm -rf "$work/dist" "$work/venv" "$work/tests" "$work/run"

# The wheel's CMake tree is pyproject.toml's build-dir (build/wheel/<tag> in the checkout),
# kept between runs, so a rerun rebuilds what changed; the first one builds the library.
settings=()
if command -v ccache >/dev/null; then
  settings+=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
start=$(date +%s)
if ! CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$build_python" -m pip wheel -q --no-index \
    --no-build-isolation --no-deps --disable-pip-version-check ${settings[@]+"${settings[@]}"} -w "$work/dist" "$src" \
    >"$work/wheel.log" 2>&1; then
  tail -30 "$work/wheel.log"; say "pip wheel failed (log: $work/wheel.log)"; exit 1
fi
wheel=$(ls "$work"/dist/lancelet-"$version"-*.whl)
say "built $(basename "$wheel") ($(stat -c %s "$wheel") bytes) in $(($(date +%s) - start)) s"

/usr/bin/python3 -m venv --system-site-packages "$work/venv"
py=$work/venv/bin/python
"$build_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
  >"$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/test_packages.pth"
"$py" -m pip install -q --no-index --disable-pip-version-check "$wheel"

# Outside the checkout: the tests copied, run from another directory, no PYTHONPATH.
cp -r "$src/python/tests" "$work/tests"
mkdir "$work/run" && cd "$work/run"
unset PYTHONPATH
"$py" - "$work/venv" "$version" <<'PY'
import os, sys
import lancelet
venv, version = sys.argv[1], sys.argv[2]
where = os.path.realpath(lancelet.__file__)
assert where.startswith(os.path.realpath(venv) + os.sep), f"lancelet imported from {where}, not from the wheel"
assert lancelet.__version__ == version, f"lancelet.__version__ is {lancelet.__version__!r}, expected {version!r}"
print(f"python_wheel: lancelet {lancelet.__version__} from {where}")
PY
LANCELET_CLI=$cli LANCELET_SOURCE_DIR=$src LANCELET_TEST_REQUIRE_PACKAGES=1 \
  "$py" -m pytest -q -p no:cacheprovider "$work/tests"
