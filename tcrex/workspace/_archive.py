"""A workspace as one zip file: its settings and uploads, versioned, to move between servers or into git.

Layout::

    workspace.json        {"format": "tcrex-workspace", "version": 1, "settings": {...},
                           "files": [{"digest": "<sha256>", "name": "loans.csv", "size": 123}, ...]}
    files/<sha256>        each upload, named by its digest

Importing treats the zip as untrusted input: only those names are read, sizes are capped before anything is
decompressed (a zip bomb is refused from its directory), every file is checked against its digest, and the
workspace gets new ids (a zip never carries links).
"""
from __future__ import annotations

import io
import json
import zipfile

from ._blobs import digest_of
from ._errors import WorkspaceError, WorkspaceTooLarge
from ._ids import is_digest
from ._store import MAX_SETTINGS_BYTES, WorkspaceStore, size_text

FORMAT = "tcrex-workspace"
VERSION = 1
_MANIFEST = "workspace.json"


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
    except zipfile.BadZipFile:
        raise WorkspaceError("not a workspace file: it is not a zip archive") from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        if _MANIFEST not in infos:
            raise WorkspaceError("not a workspace file: workspace.json is missing")
        if infos[_MANIFEST].file_size > MAX_SETTINGS_BYTES + 65536:
            raise WorkspaceTooLarge("workspace.json is too large")
        try:
            manifest = json.loads(zf.read(_MANIFEST).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
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
        payloads = []
        for entry in files:
            blob = zf.read(f"files/{entry['digest']}")
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
