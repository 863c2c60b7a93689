"""katydid: an in-memory analytics engine for exploring big CSV files with SQL.

    >>> import katydid
    >>> con = katydid.connect()
    >>> con.load("trips.csv.gz")                 # table "trips"
    >>> con.sql("SELECT vendor_id, count(*) FROM trips GROUP BY 1").pl()

Results convert to Arrow (`.arrow()`), Polars (`.pl()`) and pandas (`.df()`)
without a Python object per value, and implement the Arrow PyCapsule
interface (`__arrow_c_stream__`), so any Arrow-aware library takes them.
`katydid.sql(...)` and `katydid.load(...)` use a default connection.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Optional, Union

from katydid._katydid import (
    CancelledError,
    Connection,
    Error,
    ExecutionError,
    InternalError,
    LoadError,
    MemoryLimitError,
    NotSupportedError,
    ParseError,
    PlanError,
    QueryResult,
)

__all__ = [
    "CancelledError",
    "Connection",
    "Error",
    "ExecutionError",
    "InternalError",
    "LoadError",
    "MemoryLimitError",
    "NotSupportedError",
    "ParseError",
    "PlanError",
    "QueryResult",
    "connect",
    "default_connection",
    "load",
    "parse_size",
    "register",
    "sql",
]

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def _physical_memory() -> Optional[int]:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def parse_size(size: Union[int, str]) -> int:
    """Bytes from a size: an int (bytes) or a string with a unit (``"4GB"``,
    ``"512MiB"``; B, KB, MB, GB, TB in powers of 1,000, KiB, MiB, GiB, TiB in
    powers of 1,024, case ignored) or a percentage of physical memory
    (``"50%"``).

    Raises ValueError for anything else, or a size below one byte.
    """
    if isinstance(size, bool):
        raise ValueError(f"{size!r} is not a size (examples: 4GB, 512MiB, 80%)")
    if isinstance(size, int):
        if size < 1:
            raise ValueError(f"memory size must be at least 1 byte, not {size}")
        return size
    if not isinstance(size, str):
        raise ValueError(f"{size!r} is not a size (examples: 4GB, 512MiB, 80%)")
    text = size.strip()
    if text.endswith("%"):
        try:
            percent = int(text[:-1].strip())
        except ValueError:
            percent = 0
        total = _physical_memory()
        if not 1 <= percent <= 100 or total is None:
            raise ValueError(f"{size!r} is not a percentage from 1% to 100%")
        return total * percent // 100
    match = re.fullmatch(r"([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([A-Za-z]*)", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"{size!r} is not a size (examples: 4GB, 512MiB, 80%)")
    number = float(match.group(1).replace("_", "").replace(",", ""))
    scaled = int(number * _UNITS[match.group(2).lower()])
    if scaled < 1:
        raise ValueError(f"{size!r} is less than one byte")
    return scaled


def connect(
    threads: Optional[int] = None, memory_limit: Union[int, str, None] = None
) -> Connection:
    """A new connection with no tables.

    ``threads``: worker threads for loads and queries (None: one per core).
    ``memory_limit``: bytes that tables and running queries may hold, as an
    int or a size string (``"4GB"``, ``"80%"``); None means 80% of physical
    memory. Work that would pass it raises MemoryLimitError.
    """
    limit = None if memory_limit is None else parse_size(memory_limit)
    return Connection(threads, limit)


_default: Optional[Connection] = None
_default_lock = threading.Lock()


def default_connection() -> Connection:
    """The connection that ``katydid.sql``, ``katydid.load`` and
    ``katydid.register`` use, created on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = connect()
        return _default


def sql(query: str) -> QueryResult:
    """Runs ``query`` on the default connection (see ``Connection.sql``)."""
    return default_connection().sql(query)


def load(path: Union[str, "os.PathLike[str]"], table: Optional[str] = None, **options):
    """Loads a file into the default connection (see ``Connection.load``)."""
    return default_connection().load(path, table, **options)


def register(name: str, obj: object, *, replace: bool = False):
    """Registers an Arrow table on the default connection (see
    ``Connection.register``)."""
    return default_connection().register(name, obj, replace=replace)
