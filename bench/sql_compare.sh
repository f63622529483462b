#!/usr/bin/env bash
# SQL on 1M rows x 16 columns (one a 64-d embedding) and a 10k-row dimension table: for
# each query, whole processes, medians of REPEATS (default 5), A B A B:
#   - `lancelet sql` against `lancelet scan` of the columns the query needs (target: at
#     most 1.5x);
#   - the reference (its query API with the same filter and projection, JavaScript for
#     what the API cannot express: bench/reference_sql.mjs) against `lancelet sql`;
#   - peak RSS of each (target for lancelet: under 256 MB).
source "$(dirname "$0")/common.sh"
REPEATS=${REPEATS:-5}
LANCELET="$BUILD/lancelet"
DB="$WORK/sql"
mkdir -p "$DB"
if [[ ! -d $DB/products.lance ]]; then
  node bench/sql_gen.mjs "$DB" --rows "$ROWS"
  "$LANCELET" create "$DB/products.lance" --from "$DB/products.arrow" >/dev/null
  "$LANCELET" create "$DB/suppliers.lance" --from "$DB/suppliers.arrow" >/dev/null
  rm "$DB/products.arrow" "$DB/suppliers.arrow"
fi
same_page_cache "$DB"

# median_s CMD...: the median wall time of REPEATS runs, in seconds.
median_s() {
  local times=()
  for ((r = 0; r < REPEATS; r++)); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null
    t1=$(date +%s%N)
    times+=($((t1 - t0)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {printf "%.4f", a[int((NR + 1) / 2)] / 1e9}'
}
peak_mb() {
  /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1 | awk '{printf "%d", $1 / 1024}'
}

# run NAME SQL SCAN_ARGS REFERENCE_QUERY
run() {
  local name=$1 sql=$2 scan=$3 ref=$4
  local -a scan_args
  read -r -a scan_args <<<"$scan"
  local s c r
  s=$(median_s "$LANCELET" sql --db "$DB" --format arrow "$sql")
  c=$(median_s "$LANCELET" "${scan_args[@]}")
  r=$(median_s env RUST_LOG=error node bench/reference_sql.mjs "$DB" "$ref")
  local rss_s rss_r
  rss_s=$(peak_mb "$LANCELET" sql --db "$DB" --format arrow "$sql")
  rss_r=$(peak_mb env RUST_LOG=error node bench/reference_sql.mjs "$DB" "$ref")
  node -e '
    const [name, s, c, r, rs, rr] = process.argv.slice(1);
    console.log(`${name}: lancelet sql ${s} s (${rs} MB), scan of its columns ${c} s: ${(s / c).toFixed(2)}x; ` +
                `reference ${r} s (${rr} MB): lancelet ${(r / s).toFixed(1)}x faster`);
  ' "$name" "$s" "$c" "$r" "$rss_s" "$rss_r"
}

P="$DB/products.lance"
run "sum(qty)" "SELECT sum(qty) FROM products" "scan $P --columns qty --format arrow" sum
run "filtered count" "SELECT count(*) FROM products WHERE price > 500" "count $P --where price>500" count
run "group by category, 3 aggregates" \
  "SELECT category, count(*) AS n, avg(price) AS avg_price, max(qty) AS max_qty FROM products GROUP BY category" \
  "scan $P --columns category,price,qty --format arrow" group
run "order by price limit 10" "SELECT id, price FROM products ORDER BY price LIMIT 10" \
  "scan $P --columns id,price --format arrow" top
run "join with 10k suppliers, group by country" \
  "SELECT s.country, count(*) AS n, sum(p.price) AS revenue FROM products p JOIN suppliers s ON p.supplier_id = s.supplier_id GROUP BY s.country" \
  "scan $P --columns supplier_id,price --format arrow" join

# Queries the reference's query API cannot express: lancelet against the scan of their
# columns only (no target; the window sorts its million rows).
# run_own NAME SQL SCAN_ARGS
run_own() {
  local name=$1 sql=$2 scan=$3
  local -a scan_args
  read -r -a scan_args <<<"$scan"
  local s c rss_s
  s=$(median_s "$LANCELET" sql --db "$DB" --format arrow "$sql")
  c=$(median_s "$LANCELET" "${scan_args[@]}")
  rss_s=$(peak_mb "$LANCELET" sql --db "$DB" --format arrow "$sql")
  node -e '
    const [name, s, c, rs] = process.argv.slice(1);
    console.log(`${name}: lancelet sql ${s} s (${rs} MB), scan of its columns ${c} s: ${(s / c).toFixed(2)}x`);
  ' "$name" "$s" "$c" "$rss_s"
}
run_own "correlated EXISTS on 10k suppliers" \
  "SELECT count(*) AS n FROM products p WHERE EXISTS (SELECT 1 FROM suppliers s WHERE s.supplier_id = p.supplier_id AND s.country = 'country_7')" \
  "scan $P --columns supplier_id --format arrow"
run_own "window: rank by price within category" \
  "SELECT id, rank() OVER (PARTITION BY category ORDER BY price DESC) AS r FROM products" \
  "scan $P --columns id,category,price --format arrow"
run_own "window: running sum by id" \
  "SELECT id, sum(qty) OVER (ORDER BY id) AS running FROM products" \
  "scan $P --columns id,qty --format arrow"
