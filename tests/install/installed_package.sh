#!/usr/bin/env bash
# The installed package, used as a user's project would use it: `cmake --install` into a
# fresh prefix, then the README's example built once through find_package(lancelet) and
# once through pkg-config, each run on a dataset the installed CLI writes.
# Usage: installed_package.sh BUILD_DIR SOURCE_DIR WORK_DIR VERSION CXX
set -euo pipefail
build=$1 source=$2 work=$3 version=$4 cxx=$5
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
printf 'id,name\n1,a\n2,b\n3,c\n4,d\n5,e\n' >"$work/rows.csv"
expected=$'version 1, 5 rows\n3 rows in a batch\nnow version 2'

run_example() {  # run_example HOW PROGRAM
  rm -rf "$work/t.lance"
  "$work/prefix/bin/lancelet" create "$work/t.lance" --from "$work/rows.csv" >/dev/null
  local got
  got=$("$2" "$work/t.lance")
  if [[ $got != "$expected" ]]; then
    printf '%s: the example printed\n%s\ninstead of\n%s\n' "$1" "$got" "$expected"
    exit 1
  fi
}

[[ $("$work/prefix/bin/lancelet" --version) == "lancelet $version" ]]
grep -q "^#define LANCELET_VERSION_STRING \"$version\"\$" "$work/prefix/include/lancelet/version.h"

cmake -S "$source/examples/installed" -B "$work/find_package" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$work/find_package" >/dev/null
run_example find_package "$work/find_package/readme_example"

export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
[[ $(pkg-config --modversion lancelet) == "$version" ]]
# shellcheck disable=SC2046  # pkg-config's words are separate arguments
"$cxx" -std=c++20 "$source/examples/readme_example.cc" $(pkg-config --cflags --libs lancelet) -o "$work/pkg_config_example"
run_example pkg-config "$work/pkg_config_example"
echo "installed package: find_package and pkg-config builds ran the example"
