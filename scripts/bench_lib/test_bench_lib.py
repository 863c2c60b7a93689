"""Unit tests of the benchmark harness: the workload files parse and give
every engine a statement; answer comparison; lookup key statements.

Run: `PYTHONPATH=scripts python3 -m unittest bench_lib.test_bench_lib`
(.ci/bench-smoke runs them).
"""

import os
import tempfile
import unittest

from bench_lib import compare, data, workloads

WORKLOADS = os.path.join(os.path.dirname(__file__), "..", "..", "benches", "workloads")


class WorkloadFiles(unittest.TestCase):
    def test_every_query_has_a_statement_for_every_engine(self):
        found = workloads.load_all(WORKLOADS)
        self.assertEqual([w.name for w in found],
                         ["taxi", "iot", "numbers", "kv", "shapes", "clickbench"])
        for w in found:
            self.assertEqual(len(w.tables), 1, w.name)
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
        kv = found[3]
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
        self.assertIn("extract", q["q19"].pending)
        self.assertEqual(q["q1"].pending, "")

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
        self.assertEqual(set(data.rows_for("default", "500").values()), {500})
        self.assertEqual(set(data.rows_for("default", "500")), set(data.SCALES["default"]))
        with self.assertRaises(SystemExit):
            data.rows_for("default", "nosuch=5")


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
        self.assertIsNotNone(compare.compare(("approx", 0.0001), a, b))

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



if __name__ == "__main__":
    unittest.main()
