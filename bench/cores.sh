#!/usr/bin/env bash
# Every core at work: each query as a whole process pinned to one core (taskset -c 0)
# against all of the machine's cores, and at --threads 8 on all cores (oversubscribed
# on a small machine), medians of REPEATS (default 5), A B C A B C, and the ratio
# one core / all cores. Data: 2M rows of bench/sql_gen.mjs's products (16 columns, one
# a 64-d embedding; two fragments) and a 100k-row table `dim` keyed by every 20th id.
source "$(dirname "$0")/common.sh"
REPEATS=${REPEATS:-5}
LANCELET="$BUILD/lancelet"
DB="$WORK/cores"
CORES=$(nproc)
mkdir -p "$DB"
if [[ ! -d $DB/products.lance ]]; then
  node bench/sql_gen.mjs "$DB" --rows 2000000
  "$LANCELET" create "$DB/products.lance" --from "$DB/products.arrow" >/dev/null
  rm "$DB/products.arrow" "$DB/suppliers.arrow"
  "$LANCELET" sql --db "$DB" "CREATE TABLE dim AS SELECT range * 20 AS id, range % 30 AS c FROM range(100000)" >/dev/null
fi
same_page_cache "$DB"
P="$DB/products.lance"

# run NAME ARGS...: lancelet ARGS on one core, on all, and at --threads 8.
run() {
  local name=$1
  shift
  local -a one=() all=() eight=()
  for ((r = 0; r < REPEATS; r++)); do
    local t0 t1
    t0=$(date +%s%N); taskset -c 0 "$LANCELET" "$@" >/dev/null; t1=$(date +%s%N); one+=($((t1 - t0)))
    t0=$(date +%s%N); "$LANCELET" "$@" >/dev/null; t1=$(date +%s%N); all+=($((t1 - t0)))
    t0=$(date +%s%N); "$LANCELET" --threads 8 "$@" >/dev/null; t1=$(date +%s%N); eight+=($((t1 - t0)))
  done
  node -e '
    const [name, cores, a, b, c] = process.argv.slice(1);
    const median = (s) => { const xs = s.split(" ").map(Number).sort((x, y) => x - y); return xs[Math.floor(xs.length / 2)] / 1e9; };
    const [one, all, eight] = [median(a), median(b), median(c)];
    console.log(`${name}: 1 core ${one.toFixed(3)} s, ${cores} cores ${all.toFixed(3)} s (${(one / all).toFixed(2)}x), ` +
                `--threads 8 ${eight.toFixed(3)} s (${(all / eight).toFixed(2)}x of ${cores} cores)`);
  ' "$name" "$CORES" "${one[*]}" "${all[*]}" "${eight[*]}"
}

run "filtered scan of id, price, emb (64-d)" scan "$P" --columns id,price,emb --where "price > 500" --format arrow
run "GROUP BY 1000 groups, 3 aggregates" sql --db "$DB" --format arrow \
  "SELECT supplier_id % 1000 AS g, count(*), avg(price), max(qty) FROM products GROUP BY g"
run "ORDER BY sku (strings) OFFSET 1M" sql --db "$DB" --format arrow \
  "SELECT sku FROM products ORDER BY sku OFFSET 1000000"
run "count(DISTINCT sku)" sql --db "$DB" --format arrow "SELECT count(DISTINCT sku) FROM products"
run "hash join 2M x 100k, GROUP BY" sql --db "$DB" --format arrow \
  "SELECT d.c, count(*), sum(p.price) FROM products p JOIN dim d ON p.id = d.id GROUP BY d.c"
run "BTree index build on price" index create "$P" price --replace

# Ingest: a CSV of 200k rows with a 128-d embedding column (the shape of a 1M-row, 1.47 GB
# file a new user tried), its size printed so that MB/s follows from the times.
CSV="$DB/embeddings.csv"
if [[ ! -f $CSV ]]; then
  python3 - "$CSV" <<'PY'
import random, sys
random.seed(7)
with open(sys.argv[1], "w") as f:
    f.write("id,name,score,emb\n")
    for i in range(200_000):
        emb = ",".join(f"{random.uniform(-1, 1):.7f}" for _ in range(128))
        f.write(f'{i},item{i},{random.random() * 100:.3f},"[{emb}]"\n')
PY
fi
echo "embeddings.csv: $(($(stat -c %s "$CSV") / 1000000)) MB"
run "create --from embeddings.csv" create "$DB/ingested.lance" --from "$CSV" --overwrite

# The same rows as JSON lines.
JSONL="$DB/embeddings.jsonl"
if [[ ! -f $JSONL ]]; then
  python3 - "$CSV" "$JSONL" <<'PY'
import csv, json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for row in csv.DictReader(f):
        emb = row["emb"]
        out.write(f'{{"id":{row["id"]},"name":{json.dumps(row["name"])},"score":{row["score"]},"emb":{emb}}}\n')
PY
fi
echo "embeddings.jsonl: $(($(stat -c %s "$JSONL") / 1000000)) MB"
run "create --from embeddings.jsonl" create "$DB/ingested.lance" --from "$JSONL" --overwrite
