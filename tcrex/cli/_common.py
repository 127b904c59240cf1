"""What every ``tcrex`` command shares: the command group (``main``), messages on stderr and ``error:`` lines (never a
traceback, :func:`_guard`), the engine's words said as options (:func:`cli_words`), paths resolved against the
user's folder, the options several commands take, the codebook and class names, and reading the data and the model
(with their checks).
"""
from __future__ import annotations

import json
import os
import posixpath

import click

from ..errors import TCRExError


def _say(msg: str) -> None:
    click.echo(msg, err=True)


class _Fail(click.ClickException):
    exit_code = 2

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True)


#: Exit code of a command stopped by SIGTERM (128 + the signal's number, as a shell reports it).
SIGTERM_EXIT = 143


def _on_sigterm(signum, frame):
    """SIGTERM (a scheduler's timeout, ``kill``): the run stops as on an error (``SystemExit``, which no error
    handler of the run takes for a problem of its files), so the files it was writing are removed
    (:func:`tcrex.outputs.atomic_output`) and only complete files stay."""
    _say("error: stopped by SIGTERM; files not finished are removed, finished ones are complete")
    raise SystemExit(SIGTERM_EXIT)


def _stop_on_sigterm():
    """Install :func:`_on_sigterm` for the command's run (main thread only); returns what restores the old one."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    return lambda: signal.signal(signal.SIGTERM, previous)


#: The engine's keyword arguments and the options that set them: the engine's messages say what to pass in
#: Python ("pass target= ..."), which a CLI user reads as the option (:func:`cli_words`).
_OPTIONS = {"target": "--target", "reference_rows": "--reference-rows", "reference": "--reference",
            "y_pred": "--y-pred-column", "model": "--model", "groups": "--group-column", "n_boot": "--n-boot",
            "constraints": "--constraints", "rho": "--rho", "tau": "--tau", "grower": "--grower"}


def cli_words(message: str) -> str:
    """An engine message in the CLI's words: ``pass target= the favourable class, e.g. target=1`` becomes ``give
    --target the favourable class, e.g. --target 1`` (and a regression interval ``(threshold, None)`` the JSON
    that --target reads)."""
    import re
    names = "|".join(map(re.escape, _OPTIONS))
    out = re.sub(rf"\bpass ({names})=\s*", lambda m: f"give {_OPTIONS[m.group(1)]} ", message)
    out = re.sub(rf"(?<![\w.-])({names})=(?=\S)", lambda m: f"{_OPTIONS[m.group(1)]} ", out)
    out = re.sub(rf"(?<![\w.-])({names})=", lambda m: _OPTIONS[m.group(1)], out)
    return out.replace("(threshold, None)", "'[threshold, null]'")


#: Parameters of the commands that name files or folders: resolved against the user's folder before anything runs
#: (a pool's or a Dask worker's folder is another one).
PATH_PARAMETERS = ("data", "out", "people_out", "model_path", "model_b_path", "rules_path", "rules_b_path",
                   "reference_rows", "constraints_path", "value_labels_path", "fit_rows_b", "dictionary_path")


def _absolute(path: str | None) -> str | None:
    """``path`` as an absolute local path (globs kept), or unchanged when it is a URL (``s3://``, ``memory://``,
    ``simplecache::s3://``): what the user typed means the same on every worker."""
    if not path or "://" in path or "::" in path:
        return path
    return os.path.abspath(os.path.expanduser(path))


def _guard(fn=None, *, folders=("people_out",)):
    """A command's body with paths made absolute, outputs checked against inputs before anything is opened
    (:func:`tcrex.cli._paths.check_outputs`; ``folders``: its output options that name a folder) and every
    problem said as one ``error:`` line. ``@_guard`` or ``@_guard(folders=("out",))``."""
    import functools

    if fn is None:
        return functools.partial(_guard, folders=folders)

    @functools.wraps(fn)
    def run(*a, **k):
        k = {name: _absolute(v) if name in PATH_PARAMETERS else v for name, v in k.items()}
        restore = _stop_on_sigterm()
        try:
            from ._paths import check_outputs
            for warning in check_outputs(k, folders):
                _say(warning)
            return fn(*a, **k)
        except (click.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except (TCRExError, OSError, ValueError, KeyError) as exc:
            from ..intake import short_error
            raise _Fail(cli_words(short_error(exc))) from None
        except MemoryError:
            raise _Fail("the command ran out of memory; give it fewer rows at a time (--batch-size, or split the "
                        "data into several files) or run it on a machine with more memory") from None
        except RecursionError:
            raise _Fail("an input is nested too deeply to be read (a file built to exhaust the reader?); check the "
                        "files given") from None
        except Exception as exc:  # noqa: BLE001 - the last word of a command is a message, never a traceback
            if os.environ.get("TCREX_DEBUG"):
                raise
            raise _Unexpected(exc) from None
        finally:
            restore()
    return run


class _Unexpected(_Fail):
    """An error no check of tcrex foresaw: one line naming it and how to see the traceback; exit 1, as Python's
    own uncaught error (2 stays bad usage or input)."""

    exit_code = 1

    def __init__(self, exc: BaseException):
        from ..intake import short_error
        text = short_error(exc).rstrip(".") or "(no message)"
        super().__init__(f"unexpected {type(exc).__name__}: {text}. This is a fault in tcrex, not in your files as "
                         "far as its checks can tell: run the command again with TCREX_DEBUG=1 for the traceback "
                         "and report it")


def _read_all(spec: str):
    import fsspec
    import pandas as pd

    from ..distributed import expand_paths, located
    frames = []
    for p in expand_paths(spec):
        try:
            with fsspec.open(p, "rb") as fh:
                frames.append(pd.read_csv(fh) if p.lower().endswith(".csv") else pd.read_parquet(fh))
        except Exception as exc:  # noqa: BLE001 - a reader's error, with the file it came from
            raise located(exc, p) from None
    return pd.concat(frames, ignore_index=True)


def _target(text):
    """A --target value: JSON when it parses (1, 0.5, [0, 1]), else the text itself (a class label)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


#: ``--value-labels FILE`` on every command that writes text: a codebook read by tcrex.intake.
_value_labels_option = click.option(
    "--value-labels", "value_labels_path", type=click.Path(exists=True, dir_okay=False),
    help="Codebook: CSV feature,value,label or JSON {feature: {value: label}}; texts then say "
         "'no checking account (A14)' instead of 'A14' (kept in the rules JSON).")

#: ``--class-names`` beside ``--value-labels``: the classes in words, as TCREx(class_names=...).
_class_names_option = click.option(
    "--class-names", "class_names_text",
    help="Names of the model's classes: JSON '{\"0\": \"rejected\", \"1\": \"approved\"}' or "
         "'0=rejected,1=approved'; texts then name the class ('approved') instead of its number (kept in the rules JSON).")


#: ``--dictionary``: the data dictionary (tcrex.dictionary) of ``fit`` (kept in the rules JSON) and, for its words,
#: of the commands that read rules.
_dictionary_option = click.option(
    "--dictionary", "dictionary_path", type=click.Path(exists=True, dir_okay=False),
    help="Data dictionary: CSV feature,value,label[,kind], a tcrex-dictionary JSON or a Table Schema (titles, labels, "
         "special codes, kinds, actionability; docs/dictionary.md). Kept in the rules JSON: later commands need "
         "not repeat it.")


def _dictionary(path):
    """The data dictionary at ``path`` (None without one), read as untrusted input before any work starts."""
    if not path:
        return None
    from ..dictionary import read_dictionary_file
    return read_dictionary_file(path, os.path.basename(path))


def _options(*options):
    """One decorator applying ``options`` in the order ``--help`` lists them (what several commands share)."""
    def apply(fn):
        for option in reversed(options):
            fn = option(fn)
        return fn
    return apply


#: ``--data`` as every command that reads data takes it.
_data_option = click.option("--data", required=True, help="Parquet/CSV file, glob, directory or fsspec URL.")

#: How the files of ``explain``, ``audit`` and ``compare`` are run: local processes or a Dask cluster, in batches.
_run_options = _options(
    click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Local processes."),
    click.option("--scheduler", help="Address of an existing Dask scheduler, tcp://HOST:PORT."),
    click.option("--batch-size", type=click.IntRange(min=1), default=262_144, show_default=True),
    click.option("--progress/--no-progress", default=True, show_default=True,
                 help="A stderr line per batch of a file (rows done, rows/s, ETA) when a file takes several."))

#: ``--reference-rows`` of ``explain --verified`` and ``audit`` (``compare`` says more: both models use them).
_reference_rows_option = click.option(
    "--reference-rows", "reference_rows",
    help="Parquet/CSV file(s) of reference rows (the rows the rules were fitted on) for the search beyond "
         "the rules when verifying recourse: a rules JSON holds no rows, so without them people whose rules "
         "have no confirmed point count as 'none' (in memory the fit rows are used).")


def _bootstrap_options(seed_help: str):
    """``--n-boot`` and ``--seed`` of the audit and the comparison."""
    return _options(click.option("--n-boot", type=int, default=1000, show_default=True),
                    click.option("--seed", type=int, default=0, show_default=True, help=seed_help))


def _class_names(text) -> dict | None:
    """The ``--class-names`` value as ``{class: name}`` (None without one); a class that reads as JSON (``1``)
    is that value, else the text (``Good``)."""
    if not text:
        return None
    try:
        pairs = json.loads(text)
    except ValueError:
        pairs = None
    if not isinstance(pairs, dict):
        items = [p for p in text.split(",") if p.strip()]
        if not items or any("=" not in p for p in items):
            raise _Fail(f"--class-names {text!r}: give JSON such as '{{\"0\": \"rejected\", \"1\": \"approved\"}}' "
                        "or class=name pairs separated by commas, such as 0=rejected,1=approved")
        pairs = dict(p.split("=", 1) for p in items)
    out = {_target(str(k).strip()): str(v).strip() for k, v in pairs.items()}
    empty = [k for k, v in out.items() if not v]
    if empty:
        raise _Fail(f"--class-names gives no name for class(es) {empty}")
    return out


def _codebook(path):
    """The codebook at ``path`` (None without one), read as untrusted input before any work starts (a regular
    file of at most the codebook budget: :func:`tcrex.inputs.read_bounded`)."""
    if not path:
        return None
    from ..inputs import read_bounded
    from ..intake import read_codebook
    from ..intake.labels import MAX_CODEBOOK_BYTES
    data = read_bounded(path, MAX_CODEBOOK_BYTES, "the codebook",
                        limit_hint="a few thousand labels take a few hundred kB")
    return read_codebook(data, os.path.basename(path))


#: A rules JSON read by a command, at most (a forest of many trees with its metarules stays far below).
MAX_RULES_BYTES = 256 * 2 ** 20


def _rules_text(path: str) -> str:
    """The text of the rules JSON at ``path`` (local or fsspec URL): a regular file of at most
    :data:`MAX_RULES_BYTES`, UTF-8."""
    from ..inputs import read_bounded
    data = read_bounded(path, MAX_RULES_BYTES, "the rules file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Fail(f"the rules file {path} is not UTF-8 text; give the JSON file tcrex fit wrote") from None


def _labelled(ex, path, book=None, label_columns=()):
    """``ex`` with the codebook at ``path`` (or already read, ``book``) in force (labels for features or values
    the rules do not have are left out, each said on stderr); ``ex`` itself when no file is given.

    ``label_columns``: columns of the data that are not features and may hold the label (``--y-pred-column``,
    ``--drop-column``s). When the codebook names exactly one of them, its entry names the classes, as the
    dashboard reads a codebook; they are used unless ``--class-names`` already named the classes."""
    if not path:
        return ex
    from ..intake import fit_codebook
    book = _codebook(path) if book is None else book
    names = set(ex.schema_.names)
    candidates = [c for c in dict.fromkeys(label_columns) if c and c in book and c not in names]
    found = fit_codebook(book, ex.schema_, candidates[0] if len(candidates) == 1 else None)
    for note in found.notes:
        _say(f"value labels: {note}")
    _say(f"value labels: {found.n_labels} label(s) for {len(found.labels)} feature(s) from {path}")
    ex = ex.update(value_labels=found.labels)
    if found.class_names and not ex.class_names:
        from ..codebook import match_feature
        classes = list(ex.classes_)
        matched, unknown = match_feature("class", True, classes, found.class_names) if classes else ({}, [])
        if unknown:
            _say(f"class names: the codebook's {candidates[0]!r} entry names {len(unknown)} value(s) the model "
                 "never outputs; left out")
        if matched:
            ex = ex.update(class_names=matched)
            _say(f"class names: {len(matched)} from the codebook's {candidates[0]!r} entry")
    return ex


def _group_labels(path, column) -> dict | None:
    """The codebook's labels of the grouping ``column`` (None without a file or a column): kept for naming groups
    even when the column is not a feature (``fit_codebook`` leaves non-features out of the explainer)."""
    if not path or not column:
        return None
    return _codebook(path).get(column)


def _labelled_rules(rules: str, path, class_names_text=None, dictionary_path=None) -> str:
    """A rules JSON with the codebook at ``path``, the ``--class-names`` and the words (titles, labels) of the
    ``--dictionary`` in force (the text itself when none is given)."""
    names = _class_names(class_names_text)
    dictionary = _dictionary(dictionary_path)
    if not path and not names and dictionary is None:
        return rules
    from .. import TCREx
    ex = TCREx.from_json(rules)
    if dictionary is not None:
        ex = ex.update(dictionary=dictionary)
        _say(f"dictionary: the words of {len(dictionary)} column(s) from {os.path.basename(dictionary_path)}")
    ex = _labelled(ex, path)
    if names:
        ex = ex.update(class_names=names)
    return ex.to_json(effectiveness=ex.effectiveness_)


def _model(path, threads=None):
    from ..distributed import load_model_file
    try:
        return load_model_file(path, threads)
    except TCRExError as exc:
        raise type(exc)(str(exc) if str(path) in str(exc) else f"{path}: {exc}") from None


def _model_features(model, columns, drop, data) -> list[str] | None:
    """The feature columns of a fit with ``model``: the model's own input names when its file carries them
    (XGBoost JSON/UBJ, skops fitted on a DataFrame, ONNX with names), every other column of the data left out and
    named on stderr; without names, every column not dropped, refused when their count is not the model's."""
    names = model.feature_names
    columns = [c for c in columns if c not in set(drop)]
    if names is not None:
        missing = [n for n in names if n not in columns]
        if missing:
            raise _Fail(f"{data}: lacks column(s) {', '.join(missing)} that the model needs (its inputs: "
                        f"{', '.join(names)})")
        left = [c for c in columns if c not in set(names)]
        _say(f"features: the model's {len(names)} input(s)" + (f"; left out: {', '.join(map(str, left))}"
                                                               if left else ""))
        return list(names)
    if model.n_features is not None and len(columns) != model.n_features:
        raise _Fail(f"the model file stores no feature names and takes {model.n_features} input(s) by position, "
                    f"but {data} has {len(columns)} column(s) besides the dropped ones: "
                    f"{', '.join(map(str, columns))}; leave out the columns that are not inputs (a label, an id) "
                    "with --drop-column")
    return None


def _warn_non_features(X) -> None:
    """One stderr line naming the columns about to become features that look like an id or a label (the intake's
    rule, :func:`tcrex.intake.non_feature_columns`): they are kept (the user may mean them), never silently."""
    from ..intake import non_feature_columns
    odd = non_feature_columns(X)
    if odd:
        listed = "; ".join(f"{c!r} {why}" for c, why in odd.items())
        flags = " ".join(f"--drop-column {c}" for c in odd)
        _say(f"warning: used as feature(s): {listed}; rules about them are meaningless — leave them out with {flags}")


def _check_model_kinds(model, X, data) -> None:
    """Text in a column the model takes as a number is refused (it would be parsed value by value, or make the
    explainer treat a number as a category)."""
    from .. import is_categorical_column
    from ..vocabulary import NUMERIC
    kinds = getattr(model, "feature_kinds", None) or {}
    bad = [c for c in X.columns if kinds.get(str(c)) == NUMERIC and is_categorical_column(X[c])
           and not _is_bool(X[c])]
    if bad:
        raise _Fail(f"{data}: column(s) {', '.join(map(repr, bad))} hold text but the model takes them as numbers; "
                    "store them as numbers")


def _is_bool(s) -> bool:
    import pandas as pd
    return pd.api.types.is_bool_dtype(s)


def _split(frame, y_col, features, drop=(), data="the data"):
    """The features (``features`` in that order, else every column but ``y_col`` and ``drop``) and outputs
    (``data`` names the input in messages)."""
    if y_col and y_col not in frame.columns:
        raise _Fail(f"column {y_col!r} is not in the data")
    if features is not None:
        X = frame[features]
    else:
        X = frame.drop(columns=[c for c in [y_col, *drop] if c and c in frame.columns])
    from ..inputs import refuse_nested_values
    refuse_nested_values(X, X.columns, data)
    return X, (frame[y_col].to_numpy() if y_col else None)


def _output_names(srcs: list[str]) -> list[str]:
    """``<input name>.parquet`` per input file; two inputs with the same name (``a.csv`` and ``a.parquet``, or
    ``x/a.parquet`` and ``y/a.parquet``) would overwrite each other's output, so they are refused by name."""
    names = [posixpath.splitext(posixpath.basename(src))[0] + ".parquet" for src in srcs]
    by_name = {}
    for src, name in zip(srcs, names):
        by_name.setdefault(name, []).append(src)
    clashes = {n: s for n, s in by_name.items() if len(s) > 1}
    if clashes:
        listed = "; ".join(f"{', '.join(s)} -> {n}" for n, s in sorted(clashes.items()))
        raise _Fail(f"several input files would write the same output file ({listed}); rename them or explain "
                    "them into separate --out directories")
    return names


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _model_threads(workers: int, scheduler) -> int | None:
    """Threads each model may use so that workers and model threads share the cores: all of them in one
    process (it predicts one batch while the explainer, single-threaded, explains the previous one), ``cores //
    workers`` in a pool; on Dask each worker's own
    thread count (``dask worker --nthreads``; None here)."""
    return None if scheduler else max(1, _cores() // max(1, workers))


def _run_options_of(workers, scheduler, batch_size, progress, reference_rows=None):
    """The :class:`tcrex.distributed.RunOptions` of a command's ``--workers``, ``--scheduler``, ``--batch-size``,
    ``--progress`` and ``--reference-rows`` (model threads: :func:`_model_threads`)."""
    from ..distributed import RunOptions
    return RunOptions(workers=workers, scheduler=scheduler, batch_size=batch_size,
                      model_threads=_model_threads(workers, scheduler), reference_rows=reference_rows,
                      progress=progress)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """T-CREx counterfactual rules: fit rules, explain and audit data sets of any size."""
