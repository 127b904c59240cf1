"""Output files that appear complete or not at all.

Every file the project writes for a person or a downstream job (Parquet and CSV outputs, rules and audit JSON,
reports, workspace archives) is written through :func:`atomic_output`: the bytes go to a hidden temporary name in
the destination's own folder (``.NAME.partial-<random>``: a leading dot and no final extension, so globs such as
``*.parquet``, pyarrow and Dask skip it), and only a complete file is renamed to its final name. A run that fails
removes its temporary file; a run killed outright (SIGKILL) leaves at most a hidden ``.partial-`` file, never a
truncated file under the final name. Works on local paths and fsspec URLs (on object stores the "rename" is the
store's own copy, which a reader sees whole or not at all).
"""
from __future__ import annotations

import contextlib
import os
import secrets

import fsspec

PARTIAL_MARK = ".partial-"


def partial_name(final: str) -> str:
    """The hidden temporary name :func:`atomic_output` writes before renaming to ``final`` (same folder)."""
    head, sep, base = str(final).rpartition("/")
    return f"{head}{sep}.{base}{PARTIAL_MARK}{secrets.token_hex(6)}"


def is_partial(name: str) -> bool:
    """Whether a file name is one of :func:`atomic_output`'s temporary names (left behind by a killed run)."""
    return os.path.basename(str(name)).startswith(".") and PARTIAL_MARK in os.path.basename(str(name))


@contextlib.contextmanager
def atomic_output(path, mode: str = "wb", **open_kwargs):
    """Open ``path`` (a local path or an fsspec URL) for writing so that it appears complete or not at all.

    Yields an open file object; on a normal exit the file is closed and renamed to ``path`` (replacing an older
    file of that name), on an exception the temporary file is removed and the exception propagates.
    """
    if "w" not in mode:
        raise ValueError(f"atomic_output writes files; mode {mode!r} does not")
    fs, final = fsspec.core.url_to_fs(str(path))
    tmp = partial_name(final)
    try:
        with fs.open(tmp, mode, **open_kwargs) as fh:
            yield fh
        fs.mv(tmp, final)
    except BaseException:
        with contextlib.suppress(Exception):
            if fs.exists(tmp):
                fs.rm(tmp)
        raise


def remove_partials(final: str) -> int:
    """Remove the temporary files :func:`atomic_output` left beside ``final`` (a local path or an fsspec URL)
    when their writer was killed outright (a lost Dask worker, SIGKILL); call it once the run that owns ``final``
    has written it. Returns how many were removed."""
    fs, path = fsspec.core.url_to_fs(str(final))
    head, _, base = path.rpartition("/")
    left = fs.glob(f"{head}/.{base}{PARTIAL_MARK}*") if head else []
    for p in left:
        with contextlib.suppress(FileNotFoundError):
            fs.rm(p)
    return len(left)
