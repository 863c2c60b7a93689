"""Unit tests of the benchmark harness: the workload files parse and give
every engine a statement; answer comparison; lookup key statements.

Run: `PYTHONPATH=scripts python3 -m unittest bench_lib.test_bench_lib`
(.ci/bench-smoke runs them).
"""

import os
import tempfile
import unittest

from bench_lib import cli, compare, data, targets, workloads

WORKLOADS = os.path.join(os.path.dirname(__file__), "..", "..", "benches", "workloads")


class WorkloadFiles(unittest.TestCase):
    def test_file_references_become_each_engines_parquet_reader(self):
        files = {"trips": "/d/x.parquet"}
        text = "SELECT count(*) FROM {file:trips} WHERE a > 1"
        self.assertEqual(cli.file_refs(text, "katydid", files),
                         "SELECT count(*) FROM '/d/x.parquet' WHERE a > 1")
        self.assertEqual(cli.file_refs(text, "duckdb", files),
                         "SELECT count(*) FROM read_parquet('/d/x.parquet') WHERE a > 1")
        self.assertEqual(cli.file_refs(text, "clickhouse", files),
                         "SELECT count(*) FROM file('/d/x.parquet', Parquet) WHERE a > 1")
        self.assertEqual(cli.file_refs("SELECT 1", "polars", files), "SELECT 1")
        with self.assertRaises(SystemExit):
            cli.file_refs("SELECT * FROM {file:other}", "duckdb", files)
        self.assertEqual(cli.file_refs("FROM '{dir:trips}/*.parquet'", "polars", files),
                         "FROM '/d/*.parquet'")
        with self.assertRaises(SystemExit):
            cli.file_refs("FROM '{dir:other}/*.parquet'", "katydid", files)

    def test_every_query_has_a_statement_for_every_engine(self):
        found = workloads.load_all(WORKLOADS)
        self.assertEqual([w.name for w in found],
                         ["taxi", "taxi_f32", "star", "iot", "numbers", "kv", "shapes",
                          "clickbench", "tpch", "join", "groupby", "tlc"])
        for w in found:
            self.assertEqual(len(w.tables), {"tpch": 8, "join": 4, "star": 2}.get(w.name, 1),
                             w.name)
            for q in w.queries:
                q.check_mode()  # raises on an unknown check
                for e in workloads.ENGINES:
                    kind, text = q.statement(e)
                    self.assertIn(kind, ("sql", "python"))
                    self.assertTrue(text and not text.endswith(";"), (q.id, e))
        taxi = found[0]
        self.assertEqual(len(taxi.queries), 9)
        q8 = taxi.queries[7]
        self.assertIn("intDiv", q8.statement("clickhouse")[1])
        self.assertIn("//", q8.statement("duckdb")[1])
        self.assertIn("trip_id / 5", q8.statement("katydid")[1])
        self.assertEqual(taxi.queries[5].check_mode(), ("topn", ["total_amount"]))
        kv = found[5]
        self.assertEqual([(lk.name, lk.keys, lk.hits) for lk in kv.lookups],
                         [("eq", 1, 1), ("in100", 100, 25)])

    def test_clickbench_has_the_43_queries(self):
        cb = {w.name: w for w in workloads.load_all(WORKLOADS)}["clickbench"]
        self.assertEqual(cb.tables, [("hits", "hits")])
        self.assertEqual([q.name for q in cb.queries], [f"q{i}" for i in range(1, 44)])
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "benches", "workloads",
                               "clickbench.sql")) as f:
            self.assertIn("ClickBench", f.read(400))
        q = {q.name: q for q in cb.queries}
        # The shared statement is ClickBench's; a dialect only where needed.
        self.assertIn("STRLEN(URL)", q["q28"].statement("duckdb")[1])
        self.assertIn("length(URL)", q["q28"].statement("clickhouse")[1])
        self.assertEqual(q["q16"].check_mode(), ("topn", ["#2"]))
        self.assertEqual(q["q8"].check_mode(), ("ties", ["#2"]))
        self.assertEqual(q["q43"].check_mode(), ("ordered",))
        # Every query runs: none is marked pending any more.
        self.assertEqual([q.name for q in cb.queries if q.pending], [])

    def test_tpch_has_the_22_queries_on_the_8_tables(self):
        tpch = {w.name: w for w in workloads.load_all(WORKLOADS)}["tpch"]
        self.assertEqual(tpch.tables[0], ("lineitem", "tpch/lineitem"))
        self.assertEqual(sorted(t for t, _ in tpch.tables),
                         ["customer", "lineitem", "nation", "orders", "part", "partsupp",
                          "region", "supplier"])
        self.assertTrue(all(d == f"tpch/{t}" for t, d in tpch.tables))
        self.assertEqual([q.name for q in tpch.queries], [f"q{i}" for i in range(1, 23)])
        q = {q.name: q for q in tpch.queries}
        for query in tpch.queries:
            # One statement for every engine (ClickHouse's q15 excepted),
            # whole (the parser joins lines).
            self.assertEqual(list(query.by_engine), ["clickhouse"] if query.name == "q15" else [],
                             query.id)
            self.assertTrue(query.default.upper().startswith(("SELECT", "WITH")), query.id)
            self.assertTrue(query.about, query.id)
        # The validation parameters of the specification.
        self.assertIn("DATE '1998-12-01' - INTERVAL '90' DAY", q["q1"].default)
        self.assertIn("p_size = 15 AND p_type LIKE '%BRASS'", q["q2"].default)
        self.assertIn("n_name = 'SAUDI ARABIA'", q["q21"].default)
        self.assertIn("('13', '31', '23', '29', '30', '18', '17')", q["q22"].default)
        self.assertTrue(q["q15"].default.startswith("WITH revenue AS ("))
        self.assertIn("toDecimal128(toString(l_extendedprice), 2)",
                      q["q15"].statement("clickhouse")[1])
        self.assertEqual(q["q15"].statement("polars"), ("sql", q["q15"].default))
        self.assertIn("NOT EXISTS (", q["q22"].default)
        # ORDER BY (… LIMIT) compares in order; q6's one row as a set.
        self.assertEqual(q["q1"].check_mode(), ("ordered",))
        self.assertEqual(q["q6"].check_mode(), ("rows",))
        self.assertTrue(q["q3"].default.endswith("LIMIT 10"))

    def test_join_wraps_the_five_questions_into_one_row(self):
        join = {w.name: w for w in workloads.load_all(WORKLOADS)}["join"]
        self.assertEqual(join.tables, [("x", "join/x"), ("small", "join/small"),
                                       ("medium", "join/medium"), ("big", "join/big")])
        self.assertEqual([q.name for q in join.queries], ["q1", "q2", "q3", "q4", "q5"])
        on = ["JOIN small USING (id1)", "JOIN medium USING (id2)",
              "LEFT JOIN medium USING (id2)", "JOIN medium USING (id5)", "JOIN big USING (id3)"]
        for query, using in zip(join.queries, on):
            self.assertTrue(query.default.startswith(
                "SELECT count(*), sum(v1), sum(v2) FROM ( SELECT x.*,"), query.id)
            self.assertIn(using, query.default)
            self.assertTrue(query.default.endswith(") AS ans"), query.id)
            self.assertEqual(query.check_mode(), ("rows",))

    def test_groupby_wraps_the_ten_questions_into_one_row(self):
        groupby = {w.name: w for w in workloads.load_all(WORKLOADS)}["groupby"]
        self.assertEqual(groupby.tables, [("x", "groupby")])
        self.assertEqual([q.name for q in groupby.queries], [f"q{i}" for i in range(1, 11)])
        by = ["GROUP BY id1 )", "GROUP BY id1, id2 )", "GROUP BY id3 )", "GROUP BY id4 )",
              "GROUP BY id6 )", "GROUP BY id4, id5 )", "GROUP BY id3 )",
              "PARTITION BY id6 ORDER BY v3 DESC", "GROUP BY id2, id4 )",
              "GROUP BY id1, id2, id3, id4, id5, id6 )"]
        for query, group in zip(groupby.queries, by):
            self.assertTrue(query.default.startswith("SELECT count(*), sum("), query.id)
            self.assertIn(group, query.default)
            self.assertTrue(query.default.endswith(") AS ans"), query.id)
            self.assertEqual(query.check_mode(), ("rows",))
            self.assertTrue(query.about, query.id)
        q = {q.name: q for q in groupby.queries}
        # DuckDB's solution text; ClickHouse's exact interpolated median.
        self.assertIn("quantile_cont(v3, 0.5) AS median_v3, stddev(v3) AS sd_v3", q["q6"].default)
        self.assertEqual(q["q6"].by_engine["clickhouse"][0], "sql")
        self.assertIn("quantileExactInclusive(0.5)(v3)", q["q6"].by_engine["clickhouse"][1])
        self.assertIn("WHERE order_v3 <= 2", q["q8"].default)
        self.assertIn("pow(corr(v1, v2), 2) AS r2", q["q9"].default)

    def test_shapes_pairs_each_tied_top_n_with_a_unique_one(self):
        shapes = {w.name: w for w in workloads.load_all(WORKLOADS)}["shapes"]
        q = {q.name: q for q in shapes.queries}
        for ties, unique in (("topn_ties_asc", "topn_unique_asc"),
                             ("topn_ties_desc", "topn_unique_desc"),
                             ("topn_ties_offset", "topn_unique_offset")):
            self.assertEqual(q[ties].check_mode(), ("topn", ["k4"]))
            self.assertEqual(q[unique].check_mode(), ("ordered",))
            self.assertEqual(q[ties].default.replace("k4", "u"), q[unique].default)
        self.assertEqual(q["or_300_ints"].default.count(" OR "), 299)
        self.assertEqual(q["or_200_mixed"].default.count(" OR "), 199)
        self.assertEqual(q["wide_arithmetic"].default.count("sum("), 40)
        self.assertIn("uniq(", q["approx_distinct_per_group"].statement("clickhouse")[1])
        self.assertEqual(q["approx_distinct_per_group"].statement("polars")[0], "python")

    def test_directives_continue_on_comment_lines(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "w.sql")
            with open(path, "w") as f:
                f.write("-- table: t kv\n-- query: a\n-- about: one\n-- two\n"
                        "-- pending: needs\n-- a feature\nSELECT 1;\n"
                        "-- for: clickhouse\nSELECT 2;\n-- query: b\n-- check: ties\nSELECT 3;\n")
            w = workloads.parse(path)
        a, b = w.queries
        self.assertEqual((a.about, a.pending), ("one two", "needs a feature"))
        self.assertEqual(a.statement("clickhouse"), ("sql", "SELECT 2"))
        self.assertEqual(a.statement("polars"), ("sql", "SELECT 1"))
        with self.assertRaises(ValueError):
            b.check_mode()  # ties needs a column

    def test_lookup_statements_fill_the_template(self):
        self.assertEqual(data.lookup_statements("SELECT * FROM kv WHERE id = {key}", [[7]]),
                         ["SELECT * FROM kv WHERE id = 7"])
        self.assertEqual(data.lookup_statements("… IN ({keys})", [[1, 2, 3]]), ["… IN (1, 2, 3)"])

    def test_lookup_keys_mix_hits_and_misses(self):
        for rows, count in ((1000, 5), (30, 5)):  # distinct overall; per statement
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "kv.csv")
                ids = [i * 7919 + 3 for i in range(rows)]
                with open(path, "w") as f:
                    f.write("id,value\n" + "".join(f"{i},1.5\n" for i in ids))
                lookups = [workloads.Lookup("kv", "eq", keys=1, hits=1),
                           workloads.Lookup("kv", "in", keys=20, hits=5)]
                keys = data.lookup_keys(path, lookups, count)
                existing = set(ids)
                self.assertEqual(len(keys["eq"]), count + 1)
                self.assertTrue(all(k[0] in existing for k in keys["eq"]))
                for stmt in keys["in"]:
                    self.assertEqual(len(stmt), 20)
                    self.assertEqual(len(set(stmt) & existing), 5)
                    self.assertEqual(len(set(stmt)), 20)
                hits = [k for stmt in keys["in"] for k in stmt if k in existing]
                self.assertEqual(len(set(hits)) == len(hits), rows == 1000)

    def test_rows_option(self):
        rows = data.rows_for("small", "taxi=2k,kv=1m")
        self.assertEqual((rows["taxi"], rows["kv"]), (2000, 1_000_000))
        self.assertEqual(rows["iot"], data.SCALES["small"]["iot"])
        # Every size but the fixed zones table's.
        self.assertEqual(set(data.rows_for("default", "500").values()), {500, data.ZONES_ROWS})
        self.assertEqual(set(data.rows_for("default", "500")), set(data.SCALES["default"]))
        with self.assertRaises(SystemExit):
            data.rows_for("default", "nosuch=5")
        self.assertEqual(data.rows_for("default", "tpch=600k")["tpch"], 600_000)

    def test_tpch_size_is_lineitem_rows(self):
        self.assertEqual(data.tpch_scale_factor(6_000_000), 1)
        self.assertEqual(data.tpch_scale_factor(60_000), 0.01)
        self.assertEqual(data.tpch_scale_factor(600_000), 0.1)
        self.assertEqual(data.tpch_scale_factor(100_000), 0.017)
        self.assertEqual(data.tpch_scale_factor(1_000), 0.01)
        self.assertEqual(data.tpch_scale_factor(60_000_000), 10)
        for scale in data.SCALES:
            self.assertIn("tpch", data.SCALES[scale])
            self.assertIn("join", data.SCALES[scale])
            self.assertIn("groupby", data.SCALES[scale])
        self.assertEqual(data.tpch_scale_factor(data.SCALES["default"]["tpch"]),
                         targets.load()["issue32"]["tpch_scale_factor"])
        self.assertEqual(data.SCALES["default"]["join"], targets.load()["issue32"]["join_x_rows"])
        self.assertEqual(data.SCALES["default"]["groupby"],
                         targets.load()["issue33"]["groupby_rows"])
        self.assertTrue(data.set_dir("d", "tpch", 60_000).endswith("tpch-sf0.01"))
        self.assertTrue(data.set_dir("d", "join", 5).endswith("join-10"))
        self.assertEqual(data.base("tpch/lineitem"), "tpch")
        self.assertEqual(data.base("taxi-f32"), "taxi-f32")

    def test_a_set_table_is_generated_once_into_its_directory(self):
        with tempfile.TemporaryDirectory() as d:
            calls = os.path.join(d, "calls")
            fake = os.path.join(d, "katydid")
            # A stand-in for `katydid generate join --rows N --out DIR`.
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho \"$@\" >> " + calls + "\n"
                        "out=$(echo \"$@\" | sed 's/.*--out \\([^ ]*\\).*/\\1/')\n"
                        "mkdir -p \"$out\" && for t in x small medium big; do "
                        "echo id1 > \"$out/$t.csv\"; done\n")
            os.chmod(fake, 0o755)
            x = data.ensure(fake, d, "join/x", 1000)
            big = data.ensure(fake, d, "join/big", 1000)
            self.assertEqual(x, os.path.join(os.path.abspath(d), "join-1000", "x.csv"))
            self.assertEqual(os.path.dirname(big), os.path.dirname(x))
            with open(calls) as f:
                self.assertEqual(f.read().split(), ["generate", "join", "--rows", "1000",
                                                    "--seed", "42", "--out",
                                                    os.path.abspath(d) + "/join-1000.tmp"])
            with self.assertRaises(SystemExit):
                data.ensure(fake, d, "join/nosuch", 1000)


class Compare(unittest.TestCase):
    def test_unordered_rows_and_float_tolerance(self):
        a = {"columns": ["k", "s"], "rows": [[1, 10.0], [2, 0.1 + 0.2]]}
        b = {"columns": ["k", "s"], "rows": [[2, 0.3], [1, 10]]}
        self.assertIsNone(compare.compare(("rows",), a, b))
        self.assertIsNotNone(compare.compare(("ordered",), a, b))
        c = {"columns": ["k", "s"], "rows": [[2, 0.3001], [1, 10]]}
        self.assertIn("row 2", compare.compare(("rows",), a, c))

    def test_integers_are_exact_except_when_approximate(self):
        a, b = {"rows": [[1000]]}, {"rows": [[1001]]}
        self.assertIsNotNone(compare.compare(("rows",), a, b))
        self.assertIsNone(compare.compare(("approx", 0.01), a, b))
        self.assertIsNone(compare.compare(("approx", 0.0001), a, b))  # within 3
        self.assertIsNotNone(compare.compare(("approx", 0.0001), a, {"rows": [[1010]]}))
        groups = {"rows": [[1, 100], [0, 200]]}
        self.assertIsNone(compare.compare(("approx", 0.05), {"rows": [[0, 205], [1, 98]]}, groups))

    def test_nulls_strings_and_timestamps(self):
        a = {"rows": [[None, "x", "2016-01-01 00:00:00"]]}
        self.assertIsNone(compare.compare(("rows",), a, a))
        self.assertIsNotNone(compare.compare(("rows",), a, {"rows": [[0, "x", "2016-01-01 00:00:00"]]}))
        self.assertIsNotNone(compare.compare(("rows",), a, {"rows": [[None, "y", "2016-01-01 00:00:00"]]}))

    def test_limit_and_topn(self):
        full = {"columns": ["id"], "rows": [[1], [2]]}
        other = {"columns": ["id"], "rows": [[3], [4]]}
        self.assertIsNone(compare.compare(("limit", 2), full, other))
        self.assertIsNotNone(compare.compare(("limit", 3), full, other))
        a = {"columns": ["t", "name"], "rows": [["2016-01-01 00:09:00", "a"], ["2016-01-01 00:09:00", "b"]]}
        b = {"columns": ["T", "name"], "rows": [["2016-01-01 00:09:00", "c"], ["2016-01-01 00:09:00", "a"]]}
        self.assertIsNone(compare.compare(("topn", ["t"]), a, b))
        b["rows"][0][0] = "2016-01-01 00:08:00"
        self.assertIsNotNone(compare.compare(("topn", ["t"]), a, b))

    def test_topn_compares_rows_away_from_the_tied_ends(self):
        # ORDER BY c DESC LIMIT 3 OFFSET 1: c = 5 is tied at the top edge and
        # c = 2 at the bottom edge; the c = 4 row is in every right answer.
        a = {"columns": ["k", "c"], "rows": [["x", 5], ["y", 4], ["z", 2]]}
        b = {"columns": ["K", "count()"], "rows": [["w", 5], ["y", 4], ["v", 2]]}
        self.assertIsNone(compare.compare(("topn", ["c"]), a, {**b, "columns": ["k", "c"]}))
        self.assertIsNone(compare.compare(("topn", ["#2"]), a, b))
        wrong = {"columns": ["k", "c"], "rows": [["w", 5], ["q", 4], ["v", 2]]}
        self.assertIn("row 1", compare.compare(("topn", ["c"]), a, wrong))
        self.assertIn("no column", compare.compare(("topn", ["#3"]), a, b))

    def test_ties_compares_the_set_and_the_key_order(self):
        a = {"columns": ["k", "c"], "rows": [["x", 5], ["y", 3], ["z", 3]]}
        swapped = {"columns": ["k", "c"], "rows": [["x", 5], ["z", 3], ["y", 3]]}
        self.assertIsNone(compare.compare(("ties", ["c"]), a, swapped))
        misordered = {"columns": ["k", "c"], "rows": [["y", 3], ["x", 5], ["z", 3]]}
        self.assertIn("order", compare.compare(("ties", ["c"]), a, misordered))
        other = {"columns": ["k", "c"], "rows": [["x", 5], ["y", 3], ["q", 3]]}
        self.assertIsNotNone(compare.compare(("ties", ["c"]), a, other))

    def test_a_date_equals_its_midnight_timestamp(self):
        a = {"rows": [["2013-07-01", 3]]}
        self.assertIsNone(compare.compare(("rows",), a, {"rows": [["2013-07-01 00:00:00", 3]]}))
        self.assertIsNotNone(compare.compare(("rows",), a, {"rows": [["2013-07-01 00:00:01", 3]]}))
        self.assertIsNotNone(compare.compare(("rows",), a, {"rows": [["2013-07-02", 3]]}))

    def test_check_query_names_the_odd_engine_out(self):
        good = {"rows": [[1]]}
        status, details = compare.check_query(
            ("rows",), {"katydid": {"rows": [[2]]}, "duckdb": good, "polars": good})
        self.assertEqual(status, "MISMATCH")
        self.assertTrue(details[0].startswith("katydid disagrees with duckdb + polars"), details)
        self.assertEqual(compare.check_query(("rows",), {"katydid": good, "duckdb": good}),
                         ("agree", []))
        self.assertEqual(compare.check_query(("rows",), {"katydid": good})[0], "single")



def _query(workload, name, times, check="rows"):
    """A summary entry: `times` maps engine -> min seconds (median 10 % more)."""
    engines = {e: {"status": "ok", "min_s": t, "median_s": t * 1.1} for e, t in times.items()}
    return {"id": f"{workload}/{name}", "workload": workload, "name": name, "check": check,
            "engines": engines}


class Targets(unittest.TestCase):
    def setUp(self):
        self.goals = targets.load()

    def test_the_file_names_every_limit(self):
        self.assertEqual(targets.per_query_limit(self.goals, "taxi"), 1.0)
        self.assertAlmostEqual(targets.per_query_limit(self.goals, "iot"), 1 / 3)
        self.assertIsNone(targets.per_query_limit(self.goals, "clickbench"))
        self.assertIsNone(targets.per_query_limit(self.goals, "tpch"))
        self.assertEqual(targets.per_query_limit(self.goals, "join"), 1.0)
        self.assertEqual((self.goals["issue32"]["tpch_geomean_vs_reference"],
                          self.goals["issue32"]["tpch_query_vs_reference_max"]), (1.0, 2.5))
        self.assertEqual(self.goals["load_baseline"]["rows_per_s"]["taxi"], 952_000)
        self.assertEqual(targets.fraction(1 / 3), "⅓")

    def test_noise_needs_min_and_median_beyond_both_bounds(self):
        noise = {"relative": 0.10, "absolute_ms": 0.2}
        self.assertEqual(targets.verdict((0.010, 0.011), (0.012, 0.013), noise), "slower")
        self.assertEqual(targets.verdict((0.010, 0.011), (0.012, 0.0112), noise), "same")
        self.assertEqual(targets.verdict((0.001, 0.001), (0.00115, 0.00115), noise), "same")
        self.assertEqual(targets.verdict((0.010, 0.011), (0.008, 0.009), noise), "faster")

    def test_issue7_taxi_sums_and_q8(self):
        qs = [_query("taxi", f"q{i}", {"katydid": 0.01, "duckdb": 0.02, "clickhouse": 0.04})
              for i in range(1, 10)]
        qs[7] = _query("taxi", "q8", {"katydid": 0.05, "duckdb": 0.02, "clickhouse": 0.04})
        for q in qs:
            q["target"] = {"met": q["engines"]["katydid"]["min_s"] <= 0.02, "ratio": 1,
                           "fastest_peer": "duckdb"}
        summary = {"engines": ["katydid", "duckdb", "clickhouse"], "queries": qs, "loads": []}
        items = {i["target"]: i for i in targets.issue7({"engines": {}}, summary, self.goals)}
        every = items["taxi: every query ≤ 1× the fastest peer"]
        self.assertFalse(every["met"])
        self.assertIn("8 of 9", every["detail"])
        total = items["taxi: the sum of the 9 ≤ ⅓ of the fastest peer's sum"]
        self.assertFalse(total["met"])  # 0.13 s against duckdb's 0.18 s
        self.assertIn("duckdb", total["detail"])
        self.assertFalse(items["taxi: q8 ≤ 1× clickhouse"]["met"])
        self.assertIsNone(items["clickbench: all queries run in katydid"]["met"])

    def test_issue7_clickbench_geomean_and_answers(self):
        qs = [_query("clickbench", "q1", {"katydid": 0.001, "duckdb": 0.004}),
              _query("clickbench", "q2", {"katydid": 0.004, "duckdb": 0.004})]
        doc = {"engines": {e: {"workloads": [{"queries": [
            {"id": q["id"], "ok": True, "columns": ["c"], "rows": [[1]]} for q in qs]}]}
            for e in ("katydid", "duckdb")}}
        summary = {"engines": ["katydid", "duckdb"], "queries": qs, "loads": []}
        items = {i["target"]: i for i in targets.issue7(doc, summary, self.goals)}
        self.assertTrue(items["clickbench: all 2 queries run in katydid"]["met"])
        self.assertTrue(items["clickbench: answers agree with duckdb"]["met"])
        g = items["clickbench: geometric mean of katydid / duckdb ≤ ½"]
        self.assertTrue(g["met"])  # sqrt(0.25 * 1) = 0.5
        self.assertIn("0.50", g["detail"])
        doc["engines"]["katydid"]["workloads"][0]["queries"][1]["rows"] = [[2]]
        items = {i["target"]: i for i in targets.issue7(doc, summary, self.goals)}
        self.assertIn("differ: q2", items["clickbench: answers agree with duckdb"]["detail"])

    def test_issue32_tpch_against_duckdb_and_join_against_every_peer(self):
        tq = [_query("tpch", "q1", {"katydid": 0.010, "duckdb": 0.005}),
              _query("tpch", "q2", {"katydid": 0.001, "duckdb": 0.004}),
              _query("tpch", "q3", {"duckdb": 0.004})]
        tq[2]["engines"]["katydid"] = {"status": "unsupported", "error": "no joins"}
        jq = [_query("join", "q1", {"katydid": 0.010, "duckdb": 0.020, "polars": 0.030})]
        jq[0]["target"] = {"met": True, "ratio": 0.5, "fastest_peer": "duckdb"}
        ok = {"ok": True, "columns": ["c"], "rows": [[1]]}
        doc = {"engines": {e: {"workloads": [{"queries": [
            dict(ok, id=q["id"]) for q in tq + jq
            if e != "katydid" or q["engines"]["katydid"].get("min_s")]}]}
            for e in ("katydid", "duckdb", "polars")}}
        summary = {"engines": ["katydid", "duckdb", "polars"], "queries": tq + jq, "loads": []}
        items = {i["target"]: i for i in targets.issue32(doc, summary, self.goals)}
        run = items["tpch: all 3 queries run in katydid"]
        self.assertFalse(run["met"])
        self.assertIn("not: q3", run["detail"])
        g = items["tpch: geometric mean of katydid / duckdb ≤ 1"]
        self.assertFalse(g["met"])  # sqrt(2 * 0.25) ≈ 0.71, but q3 has no time
        self.assertIn("0.71 over 2 of 3", g["detail"])
        worst = items["tpch: no query above 2.5× duckdb"]
        self.assertIn("worst q1 2.00×", worst["detail"])
        self.assertIn("2 of 3 agree", items["tpch: answers agree with duckdb"]["detail"])
        self.assertTrue(items["join: every query ≤ 1× the fastest peer"]["met"])
        # ClickHouse did not run: the agreement target is not measured.
        self.assertIsNone(items["join: answers agree with duckdb, polars, clickhouse"]["met"])
        self.assertIsNone(items["star: q2 ≤ ½× duckdb"]["met"])  # star did not run

    def test_issue32_star_join_against_its_own_group_by_and_duckdb(self):
        sq = [_query("star", "q1", {"katydid": 0.004, "duckdb": 0.020}),
              _query("star", "q2", {"katydid": 0.007, "duckdb": 0.020})]
        summary = {"engines": ["katydid", "duckdb"], "queries": sq, "loads": []}
        doc = {"engines": {}}
        items = {i["target"]: i for i in targets.issue32(doc, summary, self.goals)}
        mine = items["star: q2 (dimension join) ≤ 1.5× q1 (the fact's own column) in katydid"]
        self.assertFalse(mine["met"])  # 7 ms against 4 ms
        self.assertIn("1.75×", mine["detail"])
        theirs = items["star: q2 ≤ ½× duckdb"]
        self.assertTrue(theirs["met"])  # 7 ms against 20 ms
        self.assertIn("0.35×", theirs["detail"])
        sq[1]["engines"]["katydid"]["min_s"] = 0.005
        items = {i["target"]: i for i in targets.issue32(doc, summary, self.goals)}
        self.assertTrue(items["star: q2 (dimension join) ≤ 1.5× q1 (the fact's own column) "
                              "in katydid"]["met"])

    def test_issue33_groupby_against_duckdb_and_the_fastest_peer(self):
        qs = [_query("groupby", f"q{i}", {"katydid": 0.010, "duckdb": 0.030, "polars": 0.025})
              for i in range(1, 10)]
        qs.append(_query("groupby", "q10", {"katydid": 0.040, "duckdb": 0.030, "polars": 0.035}))
        for q in qs:
            k, fastest = q["engines"]["katydid"]["min_s"], 0.025 if q["name"] != "q10" else 0.030
            q["target"] = {"met": k <= fastest, "ratio": k / fastest,
                           "fastest_peer": "polars" if q["name"] != "q10" else "duckdb"}
        ok = {"ok": True, "columns": ["c"], "rows": [[1]]}
        doc = {"engines": {e: {"workloads": [{"queries": [dict(ok, id=q["id"]) for q in qs]}]}
                           for e in ("katydid", "duckdb", "polars")}}
        summary = {"engines": ["katydid", "duckdb", "polars"], "queries": qs, "loads": []}
        items = {i["target"]: i for i in targets.issue33(doc, summary, self.goals)}
        self.assertTrue(items["groupby: all 10 queries run in katydid"]["met"])
        self.assertTrue(items["groupby: answers agree with duckdb"]["met"])
        every = items["groupby: every query ≤ 1× the fastest peer"]
        self.assertFalse(every["met"])
        self.assertIn("not met: q10 1.33× duckdb", every["detail"])
        # katydid 0.13 s against polars' 0.26 s: exactly half.
        total = items["groupby: the sum of the 10 ≤ ½ of the fastest peer's sum"]
        self.assertTrue(total["met"])
        self.assertIn("polars", total["detail"])
        self.assertIn("(0.50×)", total["detail"])
        # Without peers nothing is measured but that katydid ran.
        alone = {"engines": ["katydid"], "queries": qs, "loads": []}
        items = targets.issue33(doc, alone, self.goals)
        self.assertEqual([i["met"] for i in items], [True, None, None, None])

    def test_issue34_tlc_answers_load_rate_and_memory_against_the_file(self):
        qs = [_query("tlc", "count", {"katydid": 0.001, "duckdb": 0.002, "polars": 0.002,
                                      "clickhouse": 0.002})]
        ok = {"ok": True, "columns": ["c"], "rows": [[1]]}
        engines = ("katydid", "duckdb", "clickhouse", "polars")
        doc = {"engines": {e: {"workloads": [{"queries": [dict(ok, id="tlc/count")]}]}
                           for e in engines}}

        def load(rows_per_s, mem=None):
            return {"status": "ok", "rows": 10_000_000, "rows_per_s": rows_per_s,
                    "mem_bytes": mem, "csv_bytes": 180_000_000}
        entry = {"workload": "tlc", "table": "trips", "engines": {
            "katydid": load(30e6, 190_000_000), "duckdb": load(10e6),
            "clickhouse": load(40e6), "polars": load(20e6)}}
        summary = {"engines": list(engines), "queries": qs, "loads": [entry]}
        items = {i["target"]: i for i in targets.issue34(doc, summary, self.goals)}
        self.assertTrue(items["tlc: answers agree with duckdb, clickhouse, polars"]["met"])
        rate = items["tlc load: rows/s at least the fastest peer's"]
        self.assertFalse(rate["met"])  # 30M against ClickHouse's 40M
        self.assertIn("clickhouse", rate["detail"])
        mem = items["tlc memory: table ≤ 1× the Parquet file"]
        self.assertFalse(mem["met"])
        self.assertIn("(1.06×)", mem["detail"])
        entry["engines"]["katydid"].update(rows_per_s=40e6, mem_bytes=180_000_000)
        items = {i["target"]: i for i in targets.issue34(doc, summary, self.goals)}
        self.assertTrue(items["tlc load: rows/s at least the fastest peer's"]["met"])
        self.assertTrue(items["tlc memory: table ≤ 1× the Parquet file"]["met"])
        # Without a tlc load, neither is measured.
        items = targets.issue34(doc, dict(summary, loads=[]), self.goals)
        self.assertEqual([i["met"] for i in items], [True, True, None, None])

    def test_issue10_memory_peak_and_rate(self):
        peak = {"rows": 1000, "csv_bytes": 400_000, "mem_bytes": 100_000, "threads": 2,
                "partition_rows": 100, "rss_before_bytes": 5_000_000,
                "peak_rss_bytes": 5_000_000 + 200_000}
        k = {"status": "ok", "rows": 1000, "rows_per_s": 800_000, "mem_bytes_per_row": 100.0,
             "peak": peak}
        summary = {"engines": ["katydid"], "queries": [],
                   "loads": [{"workload": "taxi", "table": "trips", "engines": {"katydid": k}}]}
        doc = {"settings": {"datasets": {"taxi/trips": "taxi"}}}
        items = {i["target"]: i for i in targets.issue10(doc, summary, self.goals)}
        self.assertFalse(items["memory: taxi ≤ 60 B/row"]["met"])
        self.assertIsNone(items["memory: iot ≤ 25 B/row"]["met"])
        # bound = 1.3 * 100 kB + 2 * 100 rows * 400 B = 210 kB >= 200 kB
        p = [i for i in items.values() if i["target"].startswith("load peak: taxi")][0]
        self.assertTrue(p["met"], p)
        peak["peak_rss_bytes"] += 20_000
        p = [i for i in targets.issue10(doc, summary, self.goals)
             if i["target"].startswith("load peak: taxi")][0]
        self.assertFalse(p["met"])
        rate = items["load rate: taxi ≥ 0.8× 952 k rows/s"]
        self.assertTrue(rate["met"])  # 800k >= 761.6k
        self.assertIn("baseline at 2,000,000 rows", rate["detail"])
        # A table of 0 bytes (linear columns) is judged, not called empty.
        peak.update(mem_bytes=0, peak_rss_bytes=5_000_000 + 70_000)
        p = [i for i in targets.issue10(doc, summary, self.goals)
             if i["target"].startswith("load peak: taxi")][0]
        self.assertTrue(p["met"], p)  # 70 kB <= 80 kB of working set
        self.assertNotIn("empty", p["detail"])

    def test_before_after_flags_regressions_of_won_queries(self):
        old_q = _query("taxi", "q1", {"katydid": 0.010, "duckdb": 0.020})
        old_q["target"] = {"met": True}
        old_q2 = _query("taxi", "q2", {"katydid": 0.010, "duckdb": 0.020})
        old_q2["target"] = {"met": True}
        old = {"summary": {"queries": [old_q, old_q2], "loads": []}}
        new = [_query("taxi", "q1", {"katydid": 0.013}), _query("taxi", "q2", {"katydid": 0.0101})]
        ba = targets.before_after(old, {}, {"queries": new, "loads": []}, self.goals)
        verdicts = {r["id"]: (r["verdict"], r["won_before"]) for r in ba["queries"]}
        self.assertEqual(verdicts, {"taxi/q1": ("slower", True), "taxi/q2": ("same", True)})
        self.assertIsNone(ba["faster_target"]["met"])  # q4, q6 missing


FAKE_RUNNER = """#!/usr/bin/env python3
# A stand-in for katydid-bench: answers every query with one row, after a
# progress line; a query whose SQL says SLEEP hangs.
import json, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
plan = json.load(open(args["--plan"]))
out = {"engine": "katydid", "version": "0", "threads": 1, "workloads": []}
for w in plan["workloads"]:
    print("katydid: workload " + w["name"], file=sys.stderr, flush=True)
    tables = []
    for t in w["tables"]:
        print("katydid:   load " + t["name"] + " from " + t["path"], file=sys.stderr, flush=True)
        if "SLOW" in t["path"]:
            time.sleep(2)
        tables.append({"name": t["name"], "rows": 1, "csv_bytes": 1, "mem_bytes": 1, "load_s": 0.1})
    queries = []
    for q in w["queries"]:
        print("katydid:   " + q["id"], file=sys.stderr, flush=True)
        if "SLEEP" in q["sql"]:
            time.sleep(60)
        queries.append({"id": q["id"], "ok": True, "times_s": [0.001], "columns": ["c"],
                        "rows": [[1]]})
    out["workloads"].append({"name": w["name"], "tables": tables, "queries": queries,
                             "series": []})
json.dump(out, open(args["--out"], "w"))
"""


class Runner(unittest.TestCase):
    def test_a_stalled_query_times_out_and_the_rest_still_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "fake-bench")
            with open(fake, "w") as f:
                f.write(FAKE_RUNNER)
            os.chmod(fake, 0o755)
            plan = {"threads": 1, "runs": 1, "warmup": 0, "workloads": [
                {"name": "w", "tables": [{"name": "t", "path": "/x.csv"}], "series": [],
                 "queries": [{"id": "w/a", "sql": "SELECT 1"}, {"id": "w/b", "sql": "SLEEP"},
                             {"id": "w/c", "sql": "SELECT 3"}]},
                {"name": "v", "tables": [], "series": [],
                 "queries": [{"id": "v/a", "sql": "SELECT 1"}]}]}
            out = cli.run_engine("katydid", plan, tmp, fake, None, 1, timeout=1.5)
        w, v = out["workloads"]
        self.assertEqual([q["id"] for q in w["queries"]], ["w/a", "w/b", "w/c"])
        self.assertEqual([q["ok"] for q in w["queries"]], [True, False, True])
        self.assertTrue(w["queries"][1]["error"].startswith("timed out"))
        self.assertEqual(w["tables"][0]["rows"], 1)
        self.assertEqual([q["ok"] for q in v["queries"]], [True])
        self.assertEqual(out["version"], "0")

    def test_a_slow_load_is_never_cut_short(self):
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "fake-bench")
            with open(fake, "w") as f:
                f.write(FAKE_RUNNER)
            os.chmod(fake, 0o755)
            plan = {"threads": 1, "runs": 1, "warmup": 0, "workloads": [
                {"name": "w", "tables": [{"name": "t", "path": "/SLOW.csv"}], "series": [],
                 "queries": [{"id": "w/a", "sql": "SELECT 1"}]}]}
            out = cli.run_engine("katydid", plan, tmp, fake, None, 1, timeout=0.5)
        self.assertEqual([q["ok"] for q in out["workloads"][0]["queries"]], [True])

    def test_progress_lines_name_the_step(self):
        self.assertEqual(cli._step("katydid:   taxi/q1", "katydid"), "taxi/q1")
        self.assertEqual(cli._step("duckdb:   load trips from /a b.csv", "duckdb"), "load")
        self.assertIsNone(cli._step("katydid: workload taxi", "katydid"))


if __name__ == "__main__":
    unittest.main()
