"""Every error class, with its attributes; nothing crashes the interpreter."""

import pytest

import katydid


def test_every_class_derives_from_katydid_error():
    for cls in (
        katydid.ParseError,
        katydid.PlanError,
        katydid.ExecutionError,
        katydid.MemoryLimitError,
        katydid.LoadError,
        katydid.CancelledError,
        katydid.NotSupportedError,
        katydid.InternalError,
    ):
        assert issubclass(cls, katydid.Error)
    assert issubclass(katydid.Error, Exception)


def test_parse_error_has_the_offset(con):
    query = "SELECT FROM WHERE"
    with pytest.raises(katydid.ParseError) as caught:
        con.sql(query)
    assert 0 <= caught.value.offset <= len(query)
    assert "syntax error" in str(caught.value)


def test_plan_error_points_at_the_unknown_column(con, people_csv):
    con.load(people_csv, "p")
    query = "SELECT nmae FROM p"
    with pytest.raises(katydid.PlanError) as caught:
        con.sql(query)
    assert "nmae" in str(caught.value)
    assert caught.value.offset == query.index("nmae")


def test_execution_error(con, people_csv):
    con.load(people_csv, "p")
    with pytest.raises(katydid.ExecutionError, match="division by zero"):
        con.sql("SELECT id / 0 FROM p")


def test_load_error_names_file_line_and_column(con, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(katydid.LoadError) as caught:
        con.load(path)
    err = caught.value
    assert err.file == str(path)
    assert err.line == 3
    assert err.column is not None and err.column >= 1
    assert con.tables() == []


def test_missing_file_is_a_load_error_without_line(con, tmp_path):
    path = tmp_path / "nope.csv"
    with pytest.raises(katydid.LoadError) as caught:
        con.load(path)
    assert caught.value.file == str(path)
    assert caught.value.line is None and caught.value.column is None


def test_memory_limit_error_keeps_nothing(people_csv):
    con = katydid.connect(threads=1, memory_limit=64)
    with pytest.raises(katydid.MemoryLimitError) as caught:
        con.load(people_csv)
    assert caught.value.limit == 64
    assert caught.value.needed > 64
    assert con.tables() == []


def test_cancelled_error_from_interrupt_is_raised_by_the_running_call(con, tmp_path):
    from conftest_helpers import slow_fifo

    with slow_fifo(tmp_path) as fifo:
        import threading

        timer = threading.Timer(0.3, con.interrupt)
        timer.start()
        with pytest.raises(katydid.CancelledError):
            con.load(fifo.path, "slow")
        timer.join()
    assert con.tables() == []


def test_not_supported_error_for_nested_arrow_columns(con):
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"xs": pa.array([[1, 2], [3]])})
    with pytest.raises(katydid.NotSupportedError):
        con.register("nested", table)


def test_register_refuses_other_objects(con):
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        con.register("x", 42)


def test_internal_error_is_a_katydid_error():
    # No input reaches it (it marks bugs); it is raised as any other class.
    with pytest.raises(katydid.Error):
        raise katydid.InternalError("boom")
