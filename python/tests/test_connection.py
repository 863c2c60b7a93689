"""Connections, loads, queries and results: every method of the API."""

import csv
import datetime
import math

import pytest

import katydid


def read_reference(path):
    """The CSV file through Python's csv module: a list of dicts of text."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_load_reports_the_table_and_infers_types(con, people_csv):
    info = con.load(people_csv)
    assert info["table"] == "people"
    assert info["rows"] == 5
    assert info["columns"] == 4
    assert info["memory_bytes"] > 0
    assert info["source_bytes"] == people_csv.stat().st_size
    assert con.tables() == ["people"]
    result = con.sql("SELECT * FROM people")
    assert result.columns == ["id", "name", "score", "born"]
    assert result.types == ["integer", "string", "float", "timestamp"]
    assert len(result) == 5


def test_fetch_methods_walk_the_rows_once(con, people_csv):
    con.load(people_csv, "p")
    result = con.sql("SELECT id, name, score, born FROM p ORDER BY id")
    first = result.fetchone()
    assert first == (1, "ann", 1.5, datetime.datetime(2020, 1, 2, 3, 4, 5))
    two = result.fetchmany(2)
    assert two == [
        (2, "bob", None, datetime.datetime(2021, 6, 30, 23, 59, 59, 250000)),
        (3, None, 2.25, None),
    ]
    rest = result.fetchall()
    assert rest == [
        (4, "dan", -4.0, datetime.datetime(1969, 12, 31, 23, 59, 59)),
        (5, "e,ve", 100.0, datetime.datetime(2024, 2, 29, 12, 0, 0)),
    ]
    assert result.fetchone() is None
    assert result.fetchall() == []


def test_rows_equal_the_csv_module_reading_of_the_file(con, people_csv):
    con.load(people_csv)
    rows = con.sql("SELECT id, name, score FROM people ORDER BY id").fetchall()
    reference = read_reference(people_csv)
    assert len(rows) == len(reference)
    for row, ref in zip(rows, reference):
        assert row[0] == int(ref["id"])
        assert row[1] == (ref["name"] or None)
        assert row[2] == (float(ref["score"]) if ref["score"] else None)


def test_load_options_delimiter_header_columns_null_string_quote(con, tmp_path):
    path = tmp_path / "semi.txt"
    path.write_text("1;'a;b';NA\n2;x;3\n")
    info = con.load(
        path,
        "semi",
        delimiter=";",
        header=False,
        columns=["n", "s", "v"],
        null_string="NA",
        quote="'",
    )
    assert info["rows"] == 2
    rows = con.sql("SELECT n, s, v FROM semi ORDER BY n").fetchall()
    assert rows == [(1, "a;b", None), (2, "x", 3)]


def test_gzip_load_and_replace(con, people_csv, people_gz):
    con.load(people_gz, "p")
    with pytest.raises(katydid.PlanError, match="already exists"):
        con.load(people_csv, "p")
    con.load(people_csv, "p", replace=True, partition_rows=2)
    assert con.sql("SELECT count(*) FROM p").fetchone() == (5,)


def test_bad_option_values_raise_value_error(con, people_csv):
    with pytest.raises(ValueError, match="delimiter"):
        con.load(people_csv, delimiter=";;")
    with pytest.raises(ValueError, match="partition_rows"):
        con.load(people_csv, partition_rows=0)
    with pytest.raises(ValueError):
        katydid.connect(threads=0)
    with pytest.raises(ValueError):
        katydid.connect(memory_limit="lots")
    assert katydid.parse_size("2KiB") == 2048
    assert katydid.parse_size("1.5GB") == 1_500_000_000
    assert katydid.parse_size(7) == 7


def test_describe_tables_and_drop(con, people_csv):
    con.load(people_csv, "a")
    con.load(people_csv, "b")
    assert con.tables() == ["a", "b"]
    described = con.describe("a")
    assert described.columns[:2] == ["column_name", "column_type"]
    assert [r[0] for r in described.fetchall()] == ["id", "name", "score", "born"]
    con.drop("a")
    assert con.tables() == ["b"]
    with pytest.raises(katydid.PlanError, match="unknown table"):
        con.drop("a")
    with pytest.raises(katydid.PlanError):
        con.sql("SELECT * FROM a")


def test_show_repr_html_and_explain(con, people_csv, capsys):
    con.load(people_csv, "p")
    result = con.sql("SELECT id, name FROM p ORDER BY id")
    result.show(max_rows=2)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split("|")[0].strip() == "id"
    assert set(lines[1]) <= {"-", "+"}
    assert "ann" in lines[2] and "bob" in lines[3]
    assert "2 of 5 rows" in out
    assert "ann" in repr(result)
    html = result._repr_html_()
    assert html.startswith("<table>") and "<td>ann</td>" in html
    plan = result.explain()
    assert isinstance(plan, str) and "p" in plan and len(plan.splitlines()) >= 1
    assert con.explain("SELECT count(*) FROM p") != ""


def test_html_escapes_text(con, tmp_path):
    path = tmp_path / "html.csv"
    path.write_text('s\n"<b>&"\n')
    con.load(path)
    html = con.sql("SELECT s FROM html")._repr_html_()
    assert "&lt;b&gt;&amp;" in html and "<b>&" not in html


def test_default_connection(people_csv):
    katydid.load(people_csv, "default_people", replace=True)
    assert katydid.sql("SELECT count(*) FROM default_people").fetchone() == (5,)
    assert katydid.default_connection() is katydid.default_connection()


def test_query_on_a_file_directly(con, people_csv):
    result = con.sql(f"SELECT count(*) AS n FROM '{people_csv}'")
    assert result.fetchall() == [(5,)]


def test_aggregates_match_python(con, people_csv):
    con.load(people_csv)
    total, mean, nulls = con.sql(
        "SELECT sum(score), avg(score), count(*) - count(score) FROM people"
    ).fetchone()
    scores = [float(r["score"]) for r in read_reference(people_csv) if r["score"]]
    assert math.isclose(total, sum(scores))
    assert math.isclose(mean, sum(scores) / len(scores))
    assert nulls == 1


def test_concurrent_queries_from_threads(con, people_csv):
    import threading

    con.load(people_csv)
    results = []

    def run():
        for _ in range(20):
            results.append(con.sql("SELECT count(*) FROM people").fetchone()[0])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [5] * 80


def test_intervals_are_timedeltas(con, people_csv):
    con.load(people_csv, "p")
    rows = con.sql(
        "SELECT id, born - TIMESTAMP '2020-01-01 00:00:00' AS age FROM p "
        "WHERE id IN (1, 3, 4) ORDER BY id"
    ).fetchall()
    expected_1 = datetime.datetime(2020, 1, 2, 3, 4, 5) - datetime.datetime(2020, 1, 1)
    expected_4 = datetime.datetime(1969, 12, 31, 23, 59, 59) - datetime.datetime(2020, 1, 1)
    assert rows == [(1, expected_1), (3, None), (4, expected_4)]
    table = con.sql("SELECT born - born AS zero FROM p WHERE id = 1").arrow()
    assert str(table.schema.field("zero").type) == "duration[us]"
    assert table.column("zero").to_pylist() == [datetime.timedelta(0)]
