"""Shared fixtures: a fresh connection per test and small CSV files."""

import gzip
import os
import signal
from pathlib import Path

import pytest

import katydid

# A shell that starts pytest in the background (CI runs it beside the Rust
# checks) starts it with SIGINT ignored, and then Python turns no SIGINT
# into KeyboardInterrupt: the Ctrl-C tests need Python's own handler back.
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def con():
    return katydid.connect(threads=2)


@pytest.fixture
def people_csv(tmp_path: Path) -> Path:
    """Five rows with integers, floats, strings, timestamps and NULLs."""
    path = tmp_path / "people.csv"
    path.write_text(
        "id,name,score,born\n"
        "1,ann,1.5,2020-01-02 03:04:05\n"
        "2,bob,,2021-06-30 23:59:59.25\n"
        "3,,2.25,\n"
        "4,dan,-4,1969-12-31 23:59:59\n"
        "5,\"e,ve\",100,2024-02-29 12:00:00\n"
    )
    return path


@pytest.fixture
def people_gz(tmp_path: Path, people_csv: Path) -> Path:
    path = tmp_path / "people_gz.csv.gz"
    path.write_bytes(gzip.compress(people_csv.read_bytes()))
    return path


def shared_dataset(name: str) -> Path:
    """A file of the shared datasets (../shared/datasets from the checkout,
    or $KATYDID_SHARED/datasets); the test is skipped when absent, and fails
    with KATYDID_REQUIRE_SHARED=1 (as `.ci/python` sets it)."""
    root = Path(__file__).resolve().parents[2]
    candidates = []
    if os.environ.get("KATYDID_SHARED"):
        candidates.append(Path(os.environ["KATYDID_SHARED"]) / "datasets" / name)
    candidates.append(root.parent / "shared" / "datasets" / name)
    for c in candidates:
        if c.exists():
            return c
    message = f"shared dataset {name} not found (looked in {candidates})"
    if os.environ.get("KATYDID_REQUIRE_SHARED") == "1":
        pytest.fail(message + " and KATYDID_REQUIRE_SHARED=1")
    pytest.skip(message)
