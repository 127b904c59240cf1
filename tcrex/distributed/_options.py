"""How a run over files is carried out, as records: :class:`RunOptions` (where and in what pieces the jobs run)
and :class:`RunCheck` (what one worker checks before any job)."""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """Where and how the files of a run are processed.

    ``workers``: local processes (1: this one); ``scheduler``: the address of a Dask scheduler (then ``workers``
    is unused); ``batch_size``: rows per batch of a file; ``model_threads``: threads each model may use in its
    sandbox (None: a Dask worker's own thread count, see :func:`tcrex.distributed.load_model_file`);
    ``reference_rows``: file(s) of reference rows for the search beyond the rules; ``progress``: a stderr line
    per batch (:class:`tcrex.distributed.BatchProgress`)."""
    workers: int = 1
    scheduler: str | None = None
    batch_size: int = 262_144
    model_threads: int | None = None
    reference_rows: str | None = None
    progress: bool = False

    def job_kwargs(self, *names: str) -> dict:
        """The options a job function takes by these keyword names (``batch_size``, ``model_threads``, ...)."""
        return {name: getattr(self, name) for name in names}


@dataclasses.dataclass(frozen=True)
class RunCheck:
    """What one worker checks before any job of a run (:func:`tcrex.distributed.check_run`): the model file
    loads, the reference rows (their features ``names``) read, and the output folder ``out`` is this client's."""
    model_path: str | None = None
    reference_rows: str | None = None
    names: tuple = ()
    out: str | None = None

    def __bool__(self) -> bool:
        return bool(self.model_path or self.reference_rows or self.out)
