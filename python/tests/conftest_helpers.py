"""A CSV input that never ends on its own: a named pipe fed by a thread.

A load of it is still running whenever a test interrupts it, however fast
the machine, so cancellation tests need no timing luck. The writer stops
when the reader goes away, when the test ends, or after `LIMIT_SECONDS`.
"""

import contextlib
import os
import threading
import time

LIMIT_SECONDS = 20.0


class SlowFifo:
    def __init__(self, path):
        self.path = path
        self.stop = threading.Event()
        self.written_rows = 0
        self.thread = threading.Thread(target=self._write, daemon=True)

    def _write(self):
        deadline = time.monotonic() + LIMIT_SECONDS
        fd = None
        # Opened without blocking, so that a reader that never comes
        # cannot hold the thread: ENXIO until the reader opens the pipe.
        while fd is None and not self.stop.is_set() and time.monotonic() < deadline:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.005)
        if fd is None:
            return
        os.set_blocking(fd, True)
        try:
            with os.fdopen(fd, "w") as f:
                f.write("a,b\n")
                n = 0
                while not self.stop.is_set() and time.monotonic() < deadline:
                    f.write("".join(f"{i},x{i % 7}\n" for i in range(n, n + 2000)))
                    f.flush()
                    n += 2000
                    self.written_rows = n
                    time.sleep(0.005)
        except (BrokenPipeError, OSError):
            pass


@contextlib.contextmanager
def slow_fifo(directory, name="slow.csv"):
    path = directory / name
    os.mkfifo(path)
    fifo = SlowFifo(path)
    fifo.thread.start()
    try:
        yield fifo
    finally:
        fifo.stop.set()
        fifo.thread.join(timeout=LIMIT_SECONDS + 5)
