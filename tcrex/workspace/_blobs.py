"""Uploaded files of workspaces, stored once per content under their SHA-256.

A blob's name is its digest, so the same upload in two workspaces is stored once, a file is never named after
anything a user typed, and every read is checked against its name (a damaged or replaced file is reported, never
handed to the model sandbox as if it were the upload). Local folders are written atomically (a temporary file,
``fsync``, then ``os.replace``): a process killed mid-write leaves either no blob or the whole blob. Any other
fsspec URL (``s3://…``, ``memory://…``) goes through fsspec's ``pipe``/``cat``.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile

from ._errors import DamagedWorkspace, store_problem
from ._ids import is_digest

#: Temporary files of a write in progress start with this (a process killed mid-write leaves one; collected later).
TMP_PREFIX = ".tmp-"


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobFolder:
    """Content-addressed files under ``root`` (a local folder or an fsspec URL)."""

    def __init__(self, root: str, max_bytes: int | None = None):
        self.root = str(root)
        #: The most bytes a blob may have (the store passes one workspace's upload budget: no upload is larger);
        #: a read stops at this + 1 byte, so a file replaced or grown in the store never fills memory.
        self.max_bytes = max_bytes
        self._local = "://" not in self.root or self.root.startswith("file://")
        if self._local:
            self._dir = self.root[len("file://"):] if self.root.startswith("file://") else self.root
            try:
                os.makedirs(self._dir, exist_ok=True)
            except OSError as exc:  # a full disk, a read-only file system, a file or a link loop where it goes
                raise store_problem(exc, self._dir) from None
            self._fs = None
        else:
            import fsspec  # noqa: PLC0415 - only a blob URL needs it; local folders stay dependency-free
            self._fs, self._dir = fsspec.core.url_to_fs(self.root)
            self._fs.makedirs(self._dir, exist_ok=True)

    def _path(self, digest: str) -> str:
        if not is_digest(digest):  # never a path from anything but a digest
            raise ValueError("not a blob digest")
        if self._local:
            return os.path.join(self._dir, digest[:2], digest)
        return f"{self._dir.rstrip('/')}/{digest[:2]}/{digest}"

    def put(self, data: bytes, step=None) -> str:
        """Write the blob (once per content). ``step(name)``, when given, is called between the write's steps
        (``"file-partial"``: half the bytes are in the temporary file) for the store's fault-injection test."""
        digest = digest_of(data)
        path = self._path(digest)
        if self.exists(digest):
            return digest
        if self._local:
            folder = os.path.dirname(path)
            try:
                os.makedirs(folder, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=folder, prefix=TMP_PREFIX)
            except OSError as exc:
                raise store_problem(exc, self._dir) from None
            try:
                with os.fdopen(fd, "wb") as fh:
                    half = len(data) // 2
                    fh.write(data[:half])
                    if step is not None:
                        fh.flush()
                        step("file-partial")
                    fh.write(data[half:])
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            except BaseException as exc:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                if isinstance(exc, OSError):  # a disk that filled up while writing
                    raise store_problem(exc, self._dir) from None
                raise
        else:
            self._fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
            self._fs.pipe_file(path, data)
        return digest

    def get(self, digest: str, size: int | None = None) -> bytes:
        """The blob ``digest``, checked against it. ``size``: the size the store recorded for it; at most that (or
        :attr:`max_bytes`) + 1 byte is read, and locally only a regular file (a FIFO or a device put in its place
        is damage, never read)."""
        path = self._path(digest)
        limit = size if size is not None else self.max_bytes
        want = -1 if limit is None else int(limit) + 1
        try:
            if self._local:
                # O_NONBLOCK: a FIFO in a blob's place would otherwise block the open until a writer comes
                fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        raise DamagedWorkspace("an uploaded file of this workspace is damaged in the store (not a "
                                               "regular file)")
                    os.set_blocking(fd, True)
                    with os.fdopen(fd, "rb", closefd=False) as fh:
                        data = fh.read(want)
                finally:
                    os.close(fd)
            else:
                with self._fs.open(path, "rb") as fh:
                    data = fh.read(want)
        except FileNotFoundError:
            raise DamagedWorkspace("an uploaded file of this workspace is missing from the store") from None
        except OSError as exc:  # unreadable: permissions, an I/O error, a folder in the blob's place
            raise store_problem(exc, self._dir) from None
        if (limit is not None and len(data) > limit) or digest_of(data) != digest:
            raise DamagedWorkspace("an uploaded file of this workspace is damaged in the store")
        return data

    def listing(self) -> list[tuple[str, float]]:
        """``(name, modified time)`` of every file under the root: blobs by their digest, and temporary files of
        writes that never finished (by their file name, starting with :data:`TMP_PREFIX`)."""
        out = []
        if self._local:
            for folder, _, names in os.walk(self._dir):
                for name in names:
                    try:
                        out.append((name, os.stat(os.path.join(folder, name)).st_mtime))
                    except FileNotFoundError:  # removed meanwhile
                        pass
        else:
            for path, info in self._fs.find(self._dir, detail=True).items():
                when = info.get("mtime") or info.get("LastModified") or info.get("created") or 0.0
                out.append((path.rsplit("/", 1)[-1], when.timestamp() if hasattr(when, "timestamp") else float(when)))
        return out

    def delete_temporary(self, name: str) -> None:
        """Remove a temporary file left by an unfinished write (a name from :meth:`listing`)."""
        if not name.startswith(TMP_PREFIX) or "/" in name or os.sep in name:
            raise ValueError("not a temporary blob file")
        if not self._local:
            return
        for folder, _, names in os.walk(self._dir):
            if name in names:
                try:
                    os.unlink(os.path.join(folder, name))
                except FileNotFoundError:
                    pass

    def looks_intact(self, digest: str, size: int) -> bool:
        """Whether the blob is there as a regular file of the recorded ``size`` (a check by metadata, cheap for a
        whole store; :meth:`get` checks the content against the digest on every read)."""
        path = self._path(digest)
        try:
            if self._local:
                st = os.stat(path)
                return stat.S_ISREG(st.st_mode) and st.st_size == int(size)
            return int(self._fs.size(path)) == int(size)
        except (OSError, ValueError):
            return False

    def exists(self, digest: str) -> bool:
        path = self._path(digest)
        return os.path.exists(path) if self._local else self._fs.exists(path)

    def delete(self, digest: str) -> None:
        path = self._path(digest)
        try:
            if self._local:
                os.unlink(path)
            else:
                self._fs.rm_file(path)
        except FileNotFoundError:
            pass
