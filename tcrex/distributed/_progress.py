"""Progress of long runs: one stderr line per batch of a file (rows done, rows/s, ETA), said where the user sees
it — this process's stderr, or from a Dask worker through the scheduler to the client that started the run
(:data:`PROGRESS_TOPIC`, which ``tcrex`` subscribes to)."""
from __future__ import annotations

import sys
import time

#: The Dask event topic a worker's progress lines are sent on (the client prints them on its stderr).
PROGRESS_TOPIC = "tcrex-progress"


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def say_progress(line: str) -> None:
    """``line`` on the run's stderr: from a Dask worker as an event on :data:`PROGRESS_TOPIC`, else here."""
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        worker = None
    if worker is not None:
        worker.log_event(PROGRESS_TOPIC, line)
    else:
        print(line, file=sys.stderr, flush=True)


class BatchProgress:
    """Counts the rows of one file as its batches are done and says a line per batch, ``verb src: done/total rows
    (share), rate rows/s, ETA`` (no total and no ETA when the file's rows are not known beforehand, a CSV). A file
    done in one batch says nothing (the run's per-file line says it). ``enabled=False``: counts only."""

    def __init__(self, verb: str, src: str, total: int | None = None, enabled: bool = True):
        self.verb, self.src, self.total, self.enabled = verb, src, total, enabled
        self.done = self.batches = 0
        self.t0 = time.perf_counter()

    def step(self, rows: int) -> None:
        self.done += rows
        self.batches += 1
        if not self.enabled or (self.batches == 1 and not (self.total and self.total > self.done)):
            return
        dt = max(time.perf_counter() - self.t0, 1e-9)
        rate = self.done / dt
        if self.total:
            left = max(self.total - self.done, 0)
            line = (f"{self.verb} {self.src}: {self.done:,}/{self.total:,} rows ({100 * self.done / self.total:.0f}%), "
                    f"{rate:,.0f} rows/s, ETA {_duration(left / rate) if rate else '?'}")
        else:
            line = f"{self.verb} {self.src}: {self.done:,} rows, {rate:,.0f} rows/s"
        say_progress(line)


def known_rows(src: str) -> int | None:
    """The rows of a Parquet file from its footer (None for a CSV, whose rows are known only once read)."""
    if src.lower().endswith(".csv"):
        return None
    import fsspec
    import pyarrow.parquet as pq
    try:
        with fsspec.open(src, "rb") as fh:
            return pq.ParquetFile(fh).metadata.num_rows
    except Exception:  # noqa: BLE001 - the run's own reader says what is wrong with the file
        return None
