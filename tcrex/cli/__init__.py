"""``tcrex``: the command line (``tcrex --help``; the entry point ``tcrex.cli:main``).

The commands live in ``_commands``; each imports what it needs inside its body (the engine, the intake, the
distributed readers, the audit, the comparison, the workspace), so ``tcrex --help`` loads none of them
(``benchmarks/cli_startup.py``). A new command: ``docs/architecture.md``.
"""
from ._commands import PATH_PARAMETERS, main

__all__ = ["main", "PATH_PARAMETERS"]
