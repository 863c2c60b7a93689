"""Ctrl-C (KeyboardInterrupt) cancels a running load or query; the GIL is
released meanwhile; the connection stays usable."""

import _thread
import threading
import time

import pytest

from conftest_helpers import slow_fifo


def interrupt_main_after(seconds):
    """Sends the main thread SIGINT's KeyboardInterrupt after `seconds`, as
    Ctrl-C in a terminal does."""
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    return timer


def test_ctrl_c_cancels_a_load_and_the_connection_goes_on(con, tmp_path, people_csv):
    with slow_fifo(tmp_path) as fifo:
        timer = interrupt_main_after(0.3)
        with pytest.raises(KeyboardInterrupt):
            con.load(fifo.path, "slow")
        timer.join()
        # The writer (a Python thread) ran during the load: the GIL was
        # released while katydid read the pipe.
        assert fifo.written_rows > 0
    assert con.tables() == []
    con.load(people_csv, "p")
    assert con.sql("SELECT count(*) FROM p").fetchone() == (5,)


def grouped_table(con, tmp_path, rows=200_000):
    path = tmp_path / "groups.csv"
    with open(path, "w") as f:
        f.write("i,s\n")
        f.writelines(f"{i},k{i * 7919 % 50021}\n" for i in range(rows))
    con.load(path, "g")


HEAVY = "SELECT s, count(*) AS n, min(i) FROM g GROUP BY s ORDER BY n DESC, s"


def run_until(con, stop_exception, seconds=10.0):
    """Runs HEAVY over and over until `stop_exception` comes; returns
    whether it came while a query was running (not between two)."""
    deadline = time.monotonic() + seconds
    in_query = False
    try:
        while time.monotonic() < deadline:
            in_query = True
            con.sql(HEAVY)
            in_query = False
    except stop_exception:
        return in_query
    pytest.fail(f"no {stop_exception.__name__} within {seconds} s")


def test_ctrl_c_cancels_a_query_and_the_connection_goes_on(con, tmp_path, people_csv):
    grouped_table(con, tmp_path)
    con.load(people_csv, "p")
    # Ctrl-C lands between two queries only in a window of microseconds; a
    # few tries make that chance vanish.
    for _ in range(5):
        timer = interrupt_main_after(0.2)
        landed_in_query = run_until(con, KeyboardInterrupt)
        timer.join()
        if landed_in_query:
            break
    assert landed_in_query
    assert con.sql("SELECT sum(id) FROM p").fetchone() == (15,)
    assert len(con.sql(HEAVY)) == 50021


def test_interrupt_cancels_a_running_query(con, tmp_path):
    import katydid

    grouped_table(con, tmp_path)
    stop = threading.Event()

    def keep_interrupting():
        # A cancel between two queries is cleared by the next one's start.
        while not stop.wait(0.01):
            con.interrupt()

    thread = threading.Thread(target=keep_interrupting)
    thread.start()
    try:
        assert run_until(con, katydid.CancelledError)
    finally:
        stop.set()
        thread.join()
    assert len(con.sql(HEAVY)) == 50021


def test_other_threads_run_while_a_query_waits(con, tmp_path):
    # A load blocked on the pipe holds no GIL: this thread's counter moves.
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.01)

    with slow_fifo(tmp_path) as fifo:
        ticker = threading.Thread(target=tick)
        ticker.start()
        threading.Timer(0.5, con.interrupt).start()
        import katydid

        with pytest.raises(katydid.CancelledError):
            con.load(fifo.path, "slow")
        stop.set()
        ticker.join()
    assert len(ticks) >= 10
