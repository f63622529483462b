#!/usr/bin/env bash
# The main job, end to end, on a fresh dataset under ./demo-data:
# create, append, delete, scan, take, time travel and inspect.
# (The SQL issue turns this into the data overlay spec's worked example.)
set -euo pipefail
LANCELET=${1:?usage: demo.sh path/to/lancelet}
DIR=demo-data
rm -rf "$DIR"
mkdir -p "$DIR"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

cat > "$DIR/users.csv" <<'CSV'
id,name,age,embedding
1,Alice,30,"[0.1, 0.2, 0.3, 0.4]"
2,Bob,25,"[0.5, 0.6, 0.7, 0.8]"
3,Carol,40,"[0.9, 1.0, 1.1, 1.2]"
4,Dave,22,"[1.3, 1.4, 1.5, 1.6]"
CSV
cat > "$DIR/more.jsonl" <<'JSON'
{"id": 5, "name": "Eve", "age": 35, "embedding": [1.7, 1.8, 1.9, 2.0]}
{"id": 6, "name": "Frank", "age": 28, "embedding": [2.1, 2.2, 2.3, 2.4]}
JSON

DS="$DIR/users.lance"
SCHEMA="id:int32,name:utf8,age:int32,embedding:fixed_size_list<float32,4>"
step "$LANCELET" create "$DS" --from "$DIR/users.csv" --schema "$SCHEMA" --stable-row-ids
step "$LANCELET" append "$DS" --from "$DIR/more.jsonl" --schema "$SCHEMA"
step "$LANCELET" scan "$DS"
step "$LANCELET" delete "$DS" --where "age < 25 OR name = 'Frank'"
step "$LANCELET" scan "$DS" --columns id,name,age,_rowid --where "age >= 25"
step "$LANCELET" take "$DS" --rows 0,3 --format jsonl
step "$LANCELET" count "$DS"
step "$LANCELET" scan "$DS" --version 1 --columns id,name --format csv
step "$LANCELET" versions "$DS"
step "$LANCELET" inspect "$DS"
# Step 3 (index query) and step 6 (compaction) of the overlay worked example join here
# when those issues land.
