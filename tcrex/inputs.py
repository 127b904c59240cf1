"""Input files read within a budget, and what an operating-system error means, in words.

Every file the project reads whole into memory from a path a person typed (a codebook, a rules JSON, a model file,
a workspace archive) goes through :func:`read_bounded`: only regular files are read (a device such as
``/dev/zero``, a FIFO or a socket is refused before a byte is read: it has no end, or blocks), and at most
``budget + 1`` bytes are ever read, so a file larger than its budget is refused without being held in memory.
:func:`os_problem` says what an ``OSError`` of a path means and what to do (a full disk, a read-only file system,
a symbolic-link loop, a file where a folder should be): the CLI's ``error:`` lines and the workspace store's
messages use it.
"""
from __future__ import annotations

import errno
import os
import stat

from .errors import InputFileError

__all__ = ["read_bounded", "os_problem", "is_url", "refuse_nested_columns", "refuse_nested_values"]

#: errno -> (what happened, what to do); ``{path}`` is the path concerned.
_OS_PROBLEMS = {
    errno.ENOENT: ("does not exist", "check the path"),
    errno.EACCES: ("cannot be read or written by this user (permission denied)",
                   "change its permissions or choose another location"),
    errno.EPERM: ("cannot be changed by this user (operation not permitted)",
                  "change its permissions or choose another location"),
    errno.EROFS: ("is on a read-only file system", "choose a location on a writable disk"),
    errno.ENOSPC: ("cannot be written: the disk is full", "free some space on that disk or choose another location"),
    errno.EDQUOT: ("cannot be written: the disk quota is exhausted", "free some space or choose another location"),
    errno.ELOOP: ("is a symbolic link that leads nowhere (a loop of links, or a link to a missing place)",
                  "point the link at a real folder or file"),
    errno.ENOTDIR: ("is not a folder (a file stands where a folder of the path should be)",
                    "give a folder, or remove or rename the file"),
    errno.EISDIR: ("is a folder, not a file", "give a file"),
    errno.EEXIST: ("already exists and is not a folder", "give a folder, or remove or rename the file"),
    errno.ENAMETOOLONG: ("is too long a name for the file system", "choose a shorter path"),
    errno.EIO: ("could not be read or written (an input/output error of the disk)", "check the disk"),
}


def is_url(path: str) -> bool:
    """Whether ``path`` is an fsspec URL (``s3://…``, ``simplecache::…``) rather than a local path."""
    return "://" in str(path) or "::" in str(path)


def os_problem(exc: OSError, path=None, what: str = "") -> str:
    """One sentence for ``exc``: ``<what> <path> <what happened>; <what to do>`` (``path``: the path concerned,
    else the error's own file name)."""
    where = path if path is not None else (exc.filename or "")
    subject = " ".join(p for p in (what, str(where)) if p) or "the path"
    code = exc.errno
    if code == errno.EEXIST and where and os.path.islink(where) and not os.path.exists(where):
        code = errno.ELOOP  # makedirs meets a link that leads nowhere: a loop, or a link to a missing place
    known = _OS_PROBLEMS.get(code)
    if known is None:
        reason = exc.strerror or str(exc) or type(exc).__name__
        return f"{subject}: {reason}"
    happened, todo = known
    return f"{subject} {happened}; {todo}"


def read_bounded(path, budget: int, what: str = "the file", *, limit_hint: str = "") -> bytes:
    """The bytes of ``path`` (a local path or an fsspec URL), read only when it is a regular file of at most
    ``budget`` bytes; at most ``budget + 1`` bytes are read. Raises :class:`tcrex.errors.InputFileError` naming
    the file, the problem and what to do. ``limit_hint``: what to do about a file that is too large."""
    path = os.fspath(path)
    if is_url(path):
        try:
            import fsspec  # noqa: PLC0415 - only a URL needs it
            with fsspec.open(path, "rb") as fh:
                data = fh.read(budget + 1)
        except ImportError as exc:
            raise InputFileError(f"{what} {path} cannot be read: {exc}; install what it names or copy the file "
                                 "to a local path") from None
        except OSError as exc:
            raise InputFileError(os_problem(exc, path, what)) from None
    else:
        try:
            # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat could refuse it
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise InputFileError(os_problem(exc, path, what)) from None
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise InputFileError(f"{what} {path} is a folder, not a file; give a file")
            if not stat.S_ISREG(mode):
                raise InputFileError(f"{what} {path} is not a regular file (a device, a pipe or a socket, which has "
                                     "no end or blocks); give a file")
            os.set_blocking(fd, True)
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(budget + 1)
        except OSError as exc:
            raise InputFileError(os_problem(exc, path, what)) from None
        finally:
            os.close(fd)
    if len(data) > budget:
        raise InputFileError(f"{what} {path} is larger than {_size(budget)}, the most accepted"
                             + (f"; {limit_hint}" if limit_hint else ""))
    return data


def refuse_nested_columns(schema, name: str) -> None:
    """Refuse a Parquet/Arrow ``schema`` with nested columns (lists, structs, maps): no rule can be about them,
    and pandas would hold them as Python objects that cannot be compared or counted. ``name`` names the file."""
    import pyarrow as pa  # noqa: PLC0415 - only Parquet needs it
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        listed = ", ".join(map(repr, nested[:10])) + (f" and {len(nested) - 10} more" if len(nested) > 10 else "")
        raise InputFileError(f"{name}: column(s) {listed} hold nested values (lists, structs or maps); flatten them "
                             "into plain columns first, or leave them out of the file")


def refuse_nested_values(frame, columns, name: str = "") -> None:
    """Refuse the ``columns`` of a pandas ``frame`` that hold nested values (lists, dicts, arrays: a nested Parquet
    column read by pandas), with the message of :func:`refuse_nested_columns`. Columns not named are not looked at
    (a file may carry nested columns that are neither features nor kept)."""
    nested = []
    for c in columns:
        s = frame[c]
        if s.dtype == object:
            first = s.dropna().head(1)
            if len(first) and isinstance(first.iloc[0], (list, tuple, dict, set)) or (
                    len(first) and type(first.iloc[0]).__name__ == "ndarray"):
                nested.append(c)
    if nested:
        listed = ", ".join(map(repr, nested[:10])) + (f" and {len(nested) - 10} more" if len(nested) > 10 else "")
        raise InputFileError((f"{name}: " if name else "") + f"column(s) {listed} hold nested values (lists, structs or "
                             "maps); flatten them into plain columns first, or leave them out of the features")


def _size(n: int) -> str:
    mb = 2 ** 20
    return f"{n / mb:,.0f} MB" if n >= mb else f"{n:,} bytes"
