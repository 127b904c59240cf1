"""``tcrex``: fit, explain, audit and model checks from the command line, and ``tcrex ui`` for the dashboard
(``tcrex --help``; the entry point ``tcrex.cli:main``).

Progress goes to stderr, results to files; a problem prints ``error: ...`` (never a traceback) and exits 2 for
bad usage/input, 1 when ``check-model`` refuses a model. Models are loaded through :mod:`tcrex.intake` (never
unpickled unless the operator allows pickle with ``TCREX_ALLOW_PICKLE=1``).

The command group and what the commands share are in ``_common``; running their files on processes or Dask in
``_runs``; the commands in ``_fit`` (fit, suggest-constraints), ``_explain``, ``_population`` (audit, compare) and
``_tools`` (check-model, ui, workspace), ``_report`` (report) and ``_monitor`` (monitor init, run, history). Each command imports what it needs inside its body (the engine, the
intake, the distributed readers, the audit, the comparison, the workspace), so ``tcrex --help`` loads none of them
(``benchmarks/cli_startup.py``). A new command: ``docs/architecture.md``.
"""
from . import _explain, _fit, _monitor, _population, _report, _tools  # noqa: F401 (importing a command module adds its commands)
from ._common import PATH_PARAMETERS, main

__all__ = ["main", "PATH_PARAMETERS"]
