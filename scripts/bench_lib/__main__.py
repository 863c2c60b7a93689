"""Entry point: `python3 -m bench_lib` (what scripts/bench runs)."""

import sys

from .cli import main

sys.exit(main())
