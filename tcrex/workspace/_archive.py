"""A workspace as one zip file: its settings and uploads, versioned, to move between servers or into git.

Layout::

    workspace.json        {"format": "tcrex-workspace", "version": 1, "settings": {...},
                           "files": [{"digest": "<sha256>", "name": "loans.csv", "size": 123}, ...]}
    files/<sha256>        each upload, named by its digest

Importing treats the zip as untrusted input: only those names are read, sizes are capped before anything is
decompressed (a zip bomb is refused from its directory), every member is read with two budgets (the size its
directory declares, and the budget itself, counting what is really decompressed: a forged size is caught while
reading, never after), every file is checked against its digest, and the workspace gets new ids (a zip never
carries links). A damaged member (bad CRC), an encrypted one, an unknown compression method and settings nested
too deeply for the JSON reader are each refused with a message saying what is wrong (:class:`WorkspaceError`).
"""
from __future__ import annotations

import io
import json
import re
import zipfile
import zlib

from ._blobs import digest_of
from ._errors import WorkspaceError, WorkspaceTooLarge
from ._ids import is_digest
from ._store import MAX_SETTINGS_BYTES, WorkspaceStore, size_text

FORMAT = "tcrex-workspace"
VERSION = 1
_MANIFEST = "workspace.json"
#: Deepest nesting of lists and objects accepted in workspace.json (the dashboard's settings nest a few levels).
MAX_SETTINGS_DEPTH = 64
#: Bytes decompressed per read of a member.
_CHUNK = 1 << 20


def archive_budget(store: WorkspaceStore) -> int:
    """The largest workspace file accepted by ``store``: its uploads' budget, the settings and the zip's own
    overhead."""
    return store.limits.workspace_bytes + MAX_SETTINGS_BYTES + 2 * 65536


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, what: str) -> bytes:
    """The bytes of one member, read with two budgets: the size its directory entry declares and ``budget``; more
    decompressed bytes than either (a forged size) stop the read at once. Damage, encryption and unknown
    compression methods become :class:`WorkspaceError`."""
    if info.flag_bits & 0x1:
        raise WorkspaceError(f"{what} is encrypted in the workspace file; export the workspace again without a "
                             "password (tcrex workspace export writes none)")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise WorkspaceError(f"{what} is compressed with a method this tcrex does not read (zip method "
                             f"{info.compress_type}); export the workspace again with tcrex workspace export "
                             "(stored or deflated members)")
    limit = min(info.file_size, budget)
    if info.file_size > budget:
        raise WorkspaceTooLarge(f"{what} declares {size_text(info.file_size)}, more than the "
                                f"{size_text(budget)} accepted")
    parts, got = [], 0
    try:
        with zf.open(info) as fh:
            # ZipExtFile stops at the declared size; reading past it is how a member holding more than it declares
            # is seen (CPython then reports a bad CRC, or a short read): at most limit + 1 bytes are ever held.
            while got <= limit:
                chunk = fh.read(min(_CHUNK, limit + 1 - got))
                if not chunk:
                    break
                parts.append(chunk)
                got += len(chunk)
    except zipfile.BadZipFile as exc:
        raise WorkspaceError(f"{what} is damaged in the workspace file ({exc}: its checksum does not match, or its "
                             "sizes are forged); export the workspace again or copy the file again") from None
    except (zlib.error, EOFError) as exc:
        raise WorkspaceError(f"{what} is damaged in the workspace file (its compressed data is broken: {exc}); "
                             "export the workspace again or copy the file again") from None
    except (NotImplementedError, RuntimeError) as exc:  # an unsupported feature the checks above did not name
        raise WorkspaceError(f"{what} cannot be read from the workspace file ({exc}); export the workspace again "
                             "with tcrex workspace export") from None
    if got != info.file_size:
        raise WorkspaceError(f"{what} is damaged in the workspace file (it holds another size than its directory "
                             "declares); export the workspace again or copy the file again")
    return b"".join(parts)


def _depth(text: str) -> int:
    """How deeply lists and objects nest in the JSON ``text`` (brackets inside strings are not counted)."""
    depth = deepest = 0
    for ch in _BRACKETS.findall(_STRINGS.sub("", text)):
        depth += 1 if ch in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def export_workspace(store: WorkspaceStore, any_id: str) -> bytes:
    """The zip of a workspace (a view link may export too: it reveals nothing the link does not show)."""
    ws = store.open(any_id, touch=False)
    files = [{"digest": d, "name": name, "size": size} for d, (name, size) in sorted(ws.blobs.items())]
    manifest = {"format": FORMAT, "version": VERSION, "settings": ws.settings, "files": files}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(_MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
        for entry in files:
            zf.writestr(f"files/{entry['digest']}", store.blobs.get(entry["digest"]))
    return buf.getvalue()


def import_workspace(store: WorkspaceStore, data: bytes):
    """A new workspace from an exported zip; returns the :class:`~tcrex.workspace.Workspace`."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, NotImplementedError) as exc:
        raise WorkspaceError(f"not a workspace file: it is not a zip archive, or its directory is damaged "
                             f"({exc}); export the workspace again") from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        if _MANIFEST not in infos:
            raise WorkspaceError("not a workspace file: workspace.json is missing")
        if infos[_MANIFEST].file_size > MAX_SETTINGS_BYTES + 65536:
            raise WorkspaceTooLarge("workspace.json is too large")
        text = _member(zf, infos[_MANIFEST], MAX_SETTINGS_BYTES + 65536, "workspace.json")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkspaceError("not a workspace file: workspace.json is not UTF-8 text") from None
        if _depth(text) > MAX_SETTINGS_DEPTH:
            raise WorkspaceError(f"workspace.json nests lists or objects more than {MAX_SETTINGS_DEPTH} levels deep; "
                                 "a workspace's settings never do: it was not written by tcrex workspace export")
        try:
            manifest = json.loads(text)
        except (ValueError, RecursionError):
            raise WorkspaceError("not a workspace file: workspace.json is not JSON") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise WorkspaceError("not a workspace file (its format is not tcrex-workspace)")
        version = manifest.get("version")
        if not isinstance(version, int) or version > VERSION or version < 1:
            raise WorkspaceError(f"workspace file version {version!r} is not supported (this tcrex reads "
                                 f"version {VERSION}); upgrade tcrex")
        settings, files = manifest.get("settings"), manifest.get("files", [])
        if not isinstance(settings, dict) or not isinstance(files, list):
            raise WorkspaceError("workspace.json lacks its settings or files list")
        declared = 0
        for entry in files:
            if not (isinstance(entry, dict) and is_digest(entry.get("digest"))
                    and isinstance(entry.get("name"), str) and isinstance(entry.get("size"), int)):
                raise WorkspaceError("workspace.json lists a file it does not describe")
            info = infos.get(f"files/{entry['digest']}")
            if info is None:
                raise WorkspaceError(f"the workspace file lacks the upload {entry['name']!r}")
            if info.file_size != entry["size"]:
                raise WorkspaceError(f"the upload {entry['name']!r} has another size than workspace.json says")
            declared += info.file_size
        if declared > store.limits.workspace_bytes:
            raise WorkspaceTooLarge(f"the workspace's uploads ({size_text(declared)}) exceed this server's budget "
                                    f"of {size_text(store.limits.workspace_bytes)} per workspace")
        payloads, left = [], store.limits.workspace_bytes
        for entry in files:
            blob = _member(zf, infos[f"files/{entry['digest']}"], left, f"the upload {entry['name']!r}")
            left -= len(blob)
            if len(blob) != entry["size"] or digest_of(blob) != entry["digest"]:
                raise WorkspaceError(f"the upload {entry['name']!r} is damaged in the workspace file")
            payloads.append((entry["name"], blob))
    ws = store.create(settings)
    try:
        for name, blob in payloads:
            store.put_blob(ws.id, blob, name)
    except BaseException:
        store.delete(ws.id)
        raise
    return store.open(ws.id, touch=False)
