"""No output over an input: every command's output paths compared with every input it names, before anything is
opened (:func:`check_outputs`, run by ``_guard`` for every command).

An output file clashes with an input when it is the same file (symbolic links followed), when it would replace an
input folder, or when it lands inside a folder of data (the next run over that folder would read it as data). An
output folder clashes when it is an input file, the same folder as an input folder or inside one, or when it holds
an input file of data or a Parquet input directly (its ``<name>.parquet`` outputs would replace it). Outputs on a file system that lives only
in this process (``memory://``) vanish when the command ends: said on stderr.
"""
from __future__ import annotations

import glob
import os

#: Parameters naming what a command reads (files, folders, globs or URLs); a parameter of another command that
#: names no file (``--model models:/NAME/1``) matches no output.
INPUT_PARAMETERS = {"data": "--data", "rules_path": "--rules", "rules_b_path": "--rules-b", "model_path": "--model",
                    "model_b_path": "--model-b", "model": "--model", "reference_rows": "--reference-rows",
                    "fit_rows_b": "--fit-rows-b", "constraints_path": "--constraints",
                    "value_labels_path": "--value-labels", "dictionary_path": "--dictionary",
                    "people": "--people", "zip_path": "ZIP_PATH"}
#: Inputs that are rows of data: a folder of them is read whole, so nothing may be written into it.
DATA_PARAMETERS = ("data", "reference_rows", "fit_rows_b", "people")
#: Parameters naming what a command writes.
OUTPUT_PARAMETERS = {"out": "--out", "people_out": "--people-out", "json_out": "--json"}
#: Protocols whose files live in this process only.
NON_PERSISTENT = ("memory",)


def _is_url(path: str) -> bool:
    return "://" in path or "::" in path


def _protocol(path: str) -> str:
    return path.split("::")[-1].split("://", 1)[0] if "://" in path else ""


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _norm_url(path: str) -> str:
    return path.rstrip("/")


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both resolved)."""
    folder = folder.rstrip(os.sep) or os.sep
    return path == folder or path.startswith(folder + os.sep)


def _input_parts(spec: str) -> tuple[list[str], list[str], str | None]:
    """The files and the folders a local input ``spec`` names, resolved, and its glob pattern (a folder: the
    folder and the files in it; a glob: the files it matches, and the pattern that a new file could match);
    URLs compared as written."""
    if _is_url(spec):
        return [_norm_url(spec)], [_norm_url(spec)], None
    if glob.has_magic(spec):
        head, tail = spec, ""
        while glob.has_magic(head):
            head, part = os.path.split(head)
            tail = os.path.join(part, tail) if tail else part
        pattern = os.path.join(_real(head), tail) if head else None
        return [_real(p) for p in glob.glob(spec) if os.path.isfile(p)], [], pattern
    real = _real(spec)
    if os.path.isdir(real):
        return [_real(os.path.join(real, n)) for n in os.listdir(real)], [real], None
    return [real], [], None


def check_outputs(params: dict, folders=("people_out",)) -> list[str]:
    """Refuse (``TCRExError``, one line naming both) any output among ``params`` (a command's keyword arguments,
    paths already absolute) that would overwrite, replace or land inside one of its inputs; ``folders``: the
    output parameters that name a folder of files. Returns warnings for outputs that will not outlive the
    command (``memory://``)."""
    from ..errors import TCRExError
    inputs = []  # (option, spec, (files, folders, pattern), is_data)
    for name, option in INPUT_PARAMETERS.items():
        spec = params.get(name)
        if isinstance(spec, str) and spec and not spec.startswith("models:/"):
            inputs.append((option, spec, _input_parts(spec), name in DATA_PARAMETERS))
    warnings = []
    for name, option in OUTPUT_PARAMETERS.items():
        out = params.get(name)
        if not isinstance(out, str) or not out:
            continue
        if _protocol(out) in NON_PERSISTENT:
            warnings.append(f"warning: {option} {out} is held in this process's memory and vanishes when the "
                            "command ends; give a folder or a persistent URL to keep it")
        target = _norm_url(out) if _is_url(out) else _real(out)
        for in_option, spec, parts, is_data in inputs:
            why = (_url_clash(target, parts) if _is_url(out) else
                   _clash(target, name in folders, *parts, is_data))
            if why:
                raise TCRExError(f"{option} {out} {why} {in_option} {spec}: the output would destroy or change an "
                                 f"input; give another {option}")
    return warnings


def _url_clash(target, parts) -> str | None:
    """URLs as written: the same address, or one below the other."""
    files, dirs, _ = parts
    same = [p for p in files + dirs if p == target or p.startswith(target + "/") or target.startswith(p + "/")]
    return "is or holds the input" if same else None


def _clash(target, folder, files, dirs, pattern, is_data) -> str | None:
    import fnmatch
    if target in files:
        return "is the input"
    if target in dirs:
        return "is the folder of the input"
    if folder and any(os.path.dirname(f) == target and (is_data or f.lower().endswith(".parquet")) for f in files):
        return "holds the input"
    if is_data and any(_inside(target, d) for d in dirs):
        return "is inside the folder of the input"
    if is_data and pattern and not folder and fnmatch.fnmatch(target, pattern):
        return "would be read as data by"
    return None
