"""Type stubs of katydid: an in-memory analytics engine for exploring big
CSV files with SQL, results as Arrow, Polars or pandas."""

import datetime
import os
from typing import Any, List, Optional, Sequence, Tuple, TypedDict, Union

import pandas
import polars
import pyarrow

Value = Union[None, bool, int, float, str, datetime.datetime]
"""One value of a row: NULL is None, timestamps are naive datetimes (UTC,
microseconds)."""

class LoadInfo(TypedDict):
    """What a load or register did."""

    table: str
    rows: int
    columns: int
    partitions: int
    source_bytes: int
    """Bytes of CSV text read (after decompression); absent for register."""
    memory_bytes: int
    """Bytes the encoded table holds in memory."""
    seconds: float
    notices: List[str]
    """What the user should know, one sentence each (e.g. why a column of
    numbers was typed as string)."""

class Error(Exception):
    """Base class of every error katydid raises."""

class ParseError(Error):
    """The SQL text does not parse."""

    offset: int
    """Byte offset of the problem in the SQL text."""

class PlanError(Error):
    """The query parsed but cannot be planned (unknown name, type mismatch)."""

    offset: Optional[int]
    """Byte offset of the problem in the SQL text, when known."""

class ExecutionError(Error):
    """The query failed while running (e.g. division by zero)."""

class MemoryLimitError(Error):
    """The work would pass the memory limit; nothing was kept of it."""

    needed: int
    """Bytes the work would have held."""
    limit: int
    """The limit in bytes."""

class LoadError(Error):
    """A file (or Arrow stream) could not be read or is malformed."""

    file: str
    line: Optional[int]
    """1-based line of the bad record; None when the file could not be read."""
    column: Optional[int]
    """1-based field number within the record; None as for ``line``."""

class CancelledError(Error):
    """The work was cancelled by ``Connection.interrupt()``."""

class NotSupportedError(Error):
    """A valid request that katydid does not implement yet."""

class InternalError(Error):
    """A bug in katydid; please report it."""

class QueryResult:
    """The result of one statement, held in memory.

    Held as the Arrow record batches the engine made (integer: int64,
    float: float64, timestamp: timestamp[us], string: utf8, boolean: bool,
    an integer sum past 2**63: decimal128(38, 0); NULLs in the validity
    bitmap), which ``arrow()``, ``pl()``, ``df()`` and the Arrow stream take
    without a copy; the row-wise methods make Python values from them.
    """

    @property
    def columns(self) -> List[str]:
        """Output column names."""
    @property
    def types(self) -> List[str]:
        """Output column types: ``integer``, ``float``, ``timestamp``,
        ``string`` or ``boolean``."""
    @property
    def query(self) -> str:
        """The SQL text of the statement."""
    @property
    def rows_scanned(self) -> int:
        """Table rows the query read (after partition skipping)."""
    @property
    def seconds(self) -> float:
        """Wall time of the statement."""
    def __len__(self) -> int:
        """Rows of the result."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """The Arrow PyCapsule interface: a capsule holding an
        ``ArrowArrayStream`` of the result (record batches of up to 2**16
        rows)."""
    def arrow(self) -> pyarrow.Table:
        """The result as a pyarrow Table (needs pyarrow)."""
    def pl(self) -> polars.DataFrame:
        """The result as a Polars DataFrame (needs polars)."""
    def df(self) -> pandas.DataFrame:
        """The result as a pandas DataFrame (needs pandas and pyarrow);
        timestamps are ``datetime64[us]``, integer columns with NULLs
        float64 (pandas' rule)."""
    def fetchall(self) -> List[Tuple[Value, ...]]:
        """The rows not fetched yet, as tuples."""
    def fetchone(self) -> Optional[Tuple[Value, ...]]:
        """The next row, or None after the last."""
    def fetchmany(self, size: int = 1) -> List[Tuple[Value, ...]]:
        """The next ``size`` rows (fewer at the end)."""
    def show(self, max_rows: int = 20) -> None:
        """Prints the first ``max_rows`` rows as the REPL's table."""
    def explain(self) -> str:
        """The plan of the statement (``EXPLAIN``), one line per step."""
    def _repr_html_(self) -> str:
        """The first 20 rows as an HTML table, for Jupyter."""

class Connection:
    """Tables in memory and the worker threads that load and query them.

    Loads and queries release the GIL; Ctrl-C (KeyboardInterrupt) cancels
    the running load or query, and the connection stays usable. Several
    threads may query one connection at once; loads, registers and drops
    wait for running queries.
    """

    def __init__(self, threads: Optional[int] = None, memory_limit: Optional[int] = None) -> None:
        """A connection with ``threads`` workers (None: one per core) and a
        memory limit in bytes (None: 80% of physical memory)."""
    @property
    def threads(self) -> int:
        """Worker threads."""
    def load(
        self,
        path: Union[str, os.PathLike[str]],
        table: Optional[str] = None,
        *,
        delimiter: Optional[str] = None,
        header: bool = True,
        null_string: Optional[str] = None,
        columns: Optional[Sequence[str]] = None,
        quote: Optional[str] = None,
        replace: bool = False,
        partition_rows: Optional[int] = None,
        max_line_size: Optional[int] = None,
    ) -> LoadInfo:
        """Loads a CSV file, plain or gzipped, or a Parquet file (known by
        its magic bytes; the CSV options do not apply) into table ``table``
        (by default the file name without extensions, e.g. ``trips`` for
        ``trips.csv.gz``). CSV column types are inferred from every value.

        ``delimiter``: one ASCII character or ``"tab"`` (None: detected);
        ``header``: the first record names the columns; ``null_string``: an
        unquoted field with this text is NULL (besides an empty one);
        ``columns``: names replacing the header's; ``quote``: the quote
        character (default ``"``); ``replace``: replace a table of that name
        (else PlanError); ``partition_rows``: rows per partition (default
        65,536); ``max_line_size``: longest record in bytes (default 64 MiB).

        Raises LoadError (file, line, column), PlanError, MemoryLimitError.
        """
    def sql(self, query: str) -> QueryResult:
        """Runs one statement: SELECT (FROM a table, or a file
        ``FROM 'x.csv'``), EXPLAIN, DESCRIBE, SHOW TABLES, SUMMARIZE.

        Raises ParseError, PlanError, ExecutionError, MemoryLimitError.
        """
    def explain(self, query: str) -> str:
        """The plan of a SELECT statement as text."""
    def register(self, name: str, obj: Any, *, replace: bool = False) -> LoadInfo:
        """Imports ``obj`` as table ``name``: a pyarrow Table or
        RecordBatchReader, a Polars or pandas DataFrame, or any object with
        ``__arrow_c_stream__``. The rows are copied and encoded into
        partitions as a load does (``obj`` may change afterwards).

        Raises TypeError for other objects, NotSupportedError for a column
        of a type katydid cannot hold (lists, structs), PlanError when the
        name is taken and ``replace`` is false.
        """
    def tables(self) -> List[str]:
        """Names of the tables, sorted."""
    def describe(self, name: str) -> QueryResult:
        """Per column of table ``name``: ``column_name``, ``column_type``,
        ``encoding``, ``null_count``, ``memory``."""
    def drop(self, name: str) -> None:
        """Removes table ``name`` and gives its memory back; PlanError if
        there is none."""
    def interrupt(self) -> None:
        """Cancels the running load or query (call it from another thread);
        that call raises CancelledError."""

def parse_size(size: Union[int, str]) -> int:
    """Bytes from an int or a size string (``"4GB"``, ``"512MiB"``,
    ``"50%"`` of physical memory); ValueError otherwise."""

def connect(threads: Optional[int] = None, memory_limit: Union[int, str, None] = None) -> Connection:
    """A new connection (see ``Connection``); ``memory_limit`` as bytes or a
    size string (``"4GB"``, ``"80%"``)."""

def default_connection() -> Connection:
    """The connection ``katydid.sql``/``load``/``register`` use."""

def sql(query: str) -> QueryResult:
    """``Connection.sql`` on the default connection."""

def load(path: Union[str, os.PathLike[str]], table: Optional[str] = None, **options: Any) -> LoadInfo:
    """``Connection.load`` on the default connection."""

def register(name: str, obj: Any, *, replace: bool = False) -> LoadInfo:
    """``Connection.register`` on the default connection."""
