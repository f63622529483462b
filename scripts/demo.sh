#!/usr/bin/env bash
# The data overlay spec's worked example (../shared/spec/data_overlay_files.md) as SQL,
# on a fresh directory: each statement is printed before its result, and `lancelet
# inspect` runs after each write so that the dense overlay (step 1) and then the sparse
# one (step 4) appear with their committed versions. The BTree on age is built from
# version 1, so step 3's query excludes the overlaid rows from its answer and
# re-evaluates them. The change feed then shows steps 1 and 4 as update pairs naming the
# columns each wrote. Step 6 folds both overlays into a new base file (OPTIMIZE).
#   usage: scripts/demo.sh path/to/lancelet [dir]   (./run demo uses ./demo-data)
set -euo pipefail
LANCELET=${1:?usage: scripts/demo.sh path/to/lancelet [dir]}
DB=${2:-demo-data}
rm -rf "$DB"
mkdir -p "$DB"

sql() { "$LANCELET" sql --db "$DB" --echo "$1"; }
inspect() { printf '\n\033[1m$ lancelet inspect %s\033[0m\n' "$DB/users.lance"; "$LANCELET" inspect "$DB/users.lance"; echo; }
heading() { printf '\n\033[1m== %s ==\033[0m\n' "$1"; }

heading "Version 1: users, one fragment, stable row ids"
sql "CREATE TABLE users (id int32, name utf8, age int32, embedding fixed_size_list<float32,4>)
  WITH (stable_row_ids = true) AS VALUES
  (1, 'Alice', 30, [0.1, 0.2, 0.3, 0.4]), (2, 'Bob', 25, [0.5, 0.6, 0.7, 0.8]),
  (3, 'Carol', 40, [0.9, 1.0, 1.1, 1.2]), (4, 'Dave', 22, [1.3, 1.4, 1.5, 1.6])"
inspect

heading "An index on age, built from version 1 (before any overlay)"
sql "CREATE INDEX age_idx ON users (age) USING BTREE"
sql "SHOW INDEXES FROM users"

heading "Step 1: write an overlay (dense: one field, two rows)"
sql "UPDATE users SET age = age + 1 WHERE id IN (2, 4)"
inspect

heading "Step 2: read"
sql "SELECT id, age FROM users"

heading "Step 3: index query (the overlay is newer than the index: offsets 1 and 3 are re-evaluated)"
sql "EXPLAIN SELECT * FROM users WHERE age = 26"
sql "SELECT id, name, age FROM users WHERE age = 26"
echo "(Bob: the index holds his old 25, the overlay his 26; the stale hit is dropped:)"
sql "EXPLAIN SELECT * FROM users WHERE age = 25"
sql "SELECT id, name, age FROM users WHERE age = 25"

heading "Step 4: a second, non-rectangular write (sparse: name for Carol and Dave, embedding for Bob)"
cat > "$DB/staged.csv" <<'CSV'
id,kind,name,embedding
2,embed,,"[2.5, 2.5, 2.5, 2.5]"
3,rename,Caroline,
4,rename,David,
CSV
cat "$DB/staged.csv"
sql "MERGE INTO users USING read_csv('$DB/staged.csv') AS staged ON users.id = staged.id
  WHEN MATCHED AND staged.kind = 'rename' THEN UPDATE SET name = staged.name
  WHEN MATCHED AND staged.kind = 'embed' THEN UPDATE SET embedding = staged.embedding"
inspect

heading "Step 5: read after the second write"
sql "SELECT name, age, embedding FROM users"

heading "The change feed: what each commit after version 1 changed (the index build, version 2, changed no value)"
sql "SELECT _change_type, _commit_version, _rowid, _changed_columns, id, name, age, embedding
  FROM table_changes('users', 1)"

heading "Step 6: compaction (overlay -> base)"
"$LANCELET" optimize "$DB/users.lance" --plan
sql "OPTIMIZE users"
printf '\n\033[1m$ lancelet inspect %s --version 5\033[0m   (the fold)\n' "$DB/users.lance"
"$LANCELET" inspect "$DB/users.lance" --version 5
echo
echo "(name, age and embedding now live in a new base file; the old file keeps id and marks them -2;"
echo " the overlays are gone, and so is flag 64; the fold dropped fragment 0 from the age index built"
echo " from version 1, so age queries went flat. OPTIMIZE then indexed it again, from version 5:)"
inspect
sql "SELECT name, age, embedding FROM users"
sql "EXPLAIN SELECT * FROM users WHERE age = 26"
