"""Results as Arrow, Polars and pandas; register from each and back."""

import datetime

import pytest

import katydid

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")
pc = pytest.importorskip("pyarrow.compute")


EXPECTED_ROWS = [
    (1, "ann", 1.5, datetime.datetime(2020, 1, 2, 3, 4, 5)),
    (2, "bob", None, datetime.datetime(2021, 6, 30, 23, 59, 59, 250000)),
    (3, None, 2.25, None),
    (4, "dan", -4.0, datetime.datetime(1969, 12, 31, 23, 59, 59)),
    (5, "e,ve", 100.0, datetime.datetime(2024, 2, 29, 12, 0, 0)),
]


@pytest.fixture
def people(con, people_csv):
    con.load(people_csv, "p")
    return con.sql("SELECT id, name, score, born FROM p ORDER BY id")


def test_arrow_types_values_and_nulls(people):
    table = people.arrow()
    assert isinstance(table, pa.Table)
    assert table.schema.names == ["id", "name", "score", "born"]
    assert table.schema.types == [
        pa.int64(),
        pa.string(),
        pa.float64(),
        pa.timestamp("us"),
    ]
    assert [table.column(i).null_count for i in range(4)] == [0, 1, 1, 1]
    rows = list(zip(*(table.column(i).to_pylist() for i in range(4))))
    assert rows == EXPECTED_ROWS
    # The same rows as the row-wise API gives.
    assert rows == people.fetchall()


def test_arrow_c_stream_is_read_without_pyarrow_table_in_between(people):
    reader = pa.RecordBatchReader.from_stream(people)
    table = reader.read_all()
    assert table.num_rows == 5
    # Each call gives a new stream over the same rows.
    assert pa.table(people).equals(table)


def test_polars(people):
    df = people.pl()
    assert isinstance(df, pl.DataFrame)
    assert df.schema == pl.Schema(
        {
            "id": pl.Int64,
            "name": pl.String,
            "score": pl.Float64,
            "born": pl.Datetime("us"),
        }
    )
    assert df.rows() == EXPECTED_ROWS


def test_pandas(people):
    df = people.df()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["id", "name", "score", "born"]
    assert df["id"].tolist() == [1, 2, 3, 4, 5]
    assert pd.isna(df["score"][1]) and pd.isna(df["name"][2]) and pd.isna(df["born"][2])
    assert df["born"][0] == pd.Timestamp("2020-01-02 03:04:05")
    assert str(df["born"].dtype).startswith("datetime64")


def test_empty_result_keeps_its_schema(con, people_csv):
    con.load(people_csv, "p")
    result = con.sql("SELECT id, born FROM p WHERE id > 100")
    table = result.arrow()
    assert table.num_rows == 0
    assert table.schema.types == [pa.int64(), pa.timestamp("us")]
    assert result.pl().shape == (0, 2)


def test_booleans_and_computed_columns(con, people_csv):
    con.load(people_csv, "p")
    table = con.sql("SELECT id, id > 2 AS big, score * 2 AS double FROM p ORDER BY id").arrow()
    assert table.schema.field("big").type == pa.bool_()
    assert table.column("big").to_pylist() == [False, False, True, True, True]
    assert table.column("double").to_pylist() == [3.0, None, 4.5, -8.0, 200.0]


def frame_rows():
    """Rows with NULLs in every column, timestamps before and after 1970."""
    return {
        "i": [1, None, -3, 2**40],
        "f": [0.5, float("inf"), None, -2.25],
        "s": ["a", None, "", "ü,\"q\""],
        "t": [
            datetime.datetime(2013, 1, 1, 0, 0, 1),
            None,
            datetime.datetime(1960, 5, 6, 7, 8, 9, 123456),
            datetime.datetime(2030, 12, 31, 23, 59, 59),
        ],
    }


def back_as_pylist(con, name):
    table = con.sql(f"SELECT i, f, s, t FROM {name}").arrow()
    return {c: table.column(c).to_pylist() for c in table.schema.names}


def test_register_pyarrow_round_trip(con):
    table = pa.table(frame_rows()).cast(
        pa.schema(
            [
                ("i", pa.int64()),
                ("f", pa.float64()),
                ("s", pa.string()),
                ("t", pa.timestamp("us")),
            ]
        )
    )
    info = con.register("arrow_t", table)
    assert info["rows"] == 4 and info["table"] == "arrow_t"
    assert back_as_pylist(con, "arrow_t") == frame_rows()
    assert con.sql("SELECT i, f, s, t FROM arrow_t").arrow().equals(table)


def test_register_polars_round_trip(con):
    df = pl.DataFrame(frame_rows(), schema={
        "i": pl.Int64, "f": pl.Float64, "s": pl.String, "t": pl.Datetime("us")
    })
    con.register("polars_t", df)
    back = con.sql("SELECT i, f, s, t FROM polars_t").pl()
    assert back.equals(df)


def test_register_pandas_round_trip(con):
    df = pd.DataFrame(
        {
            "i": pd.array([1, None, -3, 2**40], dtype="Int64"),
            "f": [0.5, float("inf"), None, -2.25],
            "s": ["a", None, "", "ü,\"q\""],
            "t": pd.Series(frame_rows()["t"], dtype="datetime64[us]"),
        }
    )
    con.register("pandas_t", df)
    assert back_as_pylist(con, "pandas_t") == frame_rows()
    back = con.sql("SELECT i, f, s, t FROM pandas_t").df()
    assert back["i"].isna().tolist() == [False, True, False, False]
    assert back["t"].isna().tolist() == [False, True, False, False]
    assert back["t"][2] == pd.Timestamp("1960-05-06 07:08:09.123456")


def test_registered_table_answers_like_a_loaded_one(con, people_csv):
    con.load(people_csv, "loaded")
    con.register("registered", con.sql("SELECT * FROM loaded").arrow())
    query = "SELECT name, count(*), sum(score), min(born) FROM {} GROUP BY name ORDER BY name"
    assert (
        con.sql(query.format("registered")).fetchall()
        == con.sql(query.format("loaded")).fetchall()
    )
    # A katydid result is itself an Arrow stream: register takes it directly.
    con.register("again", con.sql("SELECT * FROM loaded"))
    assert con.sql("SELECT count(*) FROM again").fetchone() == (5,)


def test_register_replace(con):
    con.register("r", pa.table({"x": [1, 2]}))
    with pytest.raises(katydid.PlanError):
        con.register("r", pa.table({"x": [1]}))
    con.register("r", pa.table({"x": [1, 2, 3]}), replace=True)
    assert con.sql("SELECT count(*) FROM r").fetchone() == (3,)


def test_many_rows_cross_batches(con):
    n = (1 << 20) + 5
    x = pa.array(range(n), pa.int64())
    con.register("big", pa.table({"x": x, "s": pc.cast(pc.divide(x, 1000), pa.string())}))
    out = con.sql("SELECT x, s FROM big ORDER BY x").arrow()
    assert out.num_rows == n
    assert len(out.column("x").chunks) >= 2
    assert out.column("x").combine_chunks().equals(x)
    assert out.column("s")[n - 1].as_py() == str((n - 1) // 1000)


def test_load_parquet_by_its_magic_bytes(con, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"i": pa.array([1, None, 3], pa.int64()), "s": ["a", "b", None]})
    path = tmp_path / "small.parquet"
    pq.write_table(table, path)
    info = con.load(path)
    assert info["table"] == "small" and info["rows"] == 3
    assert con.sql("SELECT i, s FROM small").arrow().equals(table)


def arrow_rows(table):
    return list(zip(*(table.column(i).to_pylist() for i in range(table.num_columns))))


def test_arrow_equals_the_row_api_across_batches(con):
    # Polars strings are views: short ones and long ones, NULLs in every
    # column, timestamps on both sides of 1970; 200,003 rows span batches.
    n = 200_003
    df = pl.DataFrame(
        {
            "i": [None if k % 9 == 4 else k * 3 - 7 for k in range(n)],
            "f": [None if k % 13 == 1 else k / 8 for k in range(n)],
            "s": [None if k % 5 == 2 else f"z{k % 700}" for k in range(n)],
            "long": [None if k % 6 == 0 else f"a longer string number {k}" for k in range(n)],
            "t": [
                None if k % 17 == 3
                else datetime.datetime(1965, 1, 1) + datetime.timedelta(seconds=k * 7919)
                for k in range(n)
            ],
        },
        schema={"i": pl.Int64, "f": pl.Float64, "s": pl.String, "long": pl.String,
                "t": pl.Datetime("us")},
    )
    con.register("frame", df)
    batch_rows = 1 << 16
    for query, rows in [
        ("SELECT * FROM frame", n),
        ("SELECT t, s, i + 1 AS j, f > 100 AS big FROM frame WHERE i % 2 = 1 OR s IS NULL", None),
        ("SELECT s, count(*) AS c, max(t) AS m, sum(f) AS total FROM frame GROUP BY s ORDER BY s", 561),
        ("SELECT * FROM frame ORDER BY f DESC NULLS LAST, i LIMIT 70000", 70_000),
        ("SELECT * FROM frame WHERE i < -100", 0),
    ]:
        result = con.sql(query)
        table = result.arrow()
        if rows is not None:
            assert table.num_rows == rows == len(result), query
        assert table.column_names == result.columns
        expected_types = {
            "integer": pa.int64(), "float": pa.float64(), "string": pa.string(),
            "timestamp": pa.timestamp("us"), "boolean": pa.bool_(),
        }
        assert table.schema.types == [expected_types[t] for t in result.types], query
        chunks = table.column(0).chunks
        assert all(0 < len(c) <= batch_rows for c in chunks), query
        assert len(chunks) >= -(-table.num_rows // batch_rows), query
        assert arrow_rows(table) == result.fetchall(), query
        assert result.pl().rows() == arrow_rows(table), query
    whole = con.sql("SELECT * FROM frame").pl()
    assert whole.equals(df)


def test_an_integer_sum_past_i64_is_an_exact_decimal(con):
    con.register("big", pa.table({"v": pa.array([2**62, 2**62, 2**62, -1], pa.int64())}))
    result = con.sql("SELECT sum(v) AS s FROM big")
    assert result.fetchone() == (3 * 2**62 - 1,)
    table = result.arrow()
    assert table.schema.types == [pa.decimal128(38, 0)]
    assert table.column(0).to_pylist() == [3 * 2**62 - 1]


def test_show_counts_rows_beyond_those_shown(con, capsys):
    con.register("many", pa.table({"x": pa.array(range(100_000), pa.int64())}))
    result = con.sql("SELECT x FROM many WHERE x % 2 = 0")
    result.show(max_rows=3)
    out = capsys.readouterr().out
    assert out.splitlines()[2:5] == ["0", "2", "4"]
    assert "(3 of 50000 rows shown)" in out
    assert "20 of 50000 rows" in result._repr_html_()
    # Showing takes no row from the cursor.
    assert result.fetchone() == (0,)
