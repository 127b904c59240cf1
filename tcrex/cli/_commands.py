"""``tcrex``: fit, explain, audit and model checks from the command line, and ``tcrex ui`` for the dashboard
(see ``tcrex --help``).

Progress goes to stderr, results to files; a problem prints ``error: ...`` (never a traceback) and exits 2 for
bad usage/input, 1 when ``check-model`` refuses a model. Models are loaded through :mod:`tcrex.intake` (never
unpickled unless the operator allows pickle with ``TCREX_ALLOW_PICKLE=1``).
"""
from __future__ import annotations

import json
import os
import posixpath
import sys
import time

import click

from ..errors import TCRExError


def _say(msg: str) -> None:
    click.echo(msg, err=True)


class _Fail(click.ClickException):
    exit_code = 2

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True)


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
                   "reference_rows", "constraints_path", "value_labels_path", "fit_rows_b")


def _absolute(path: str | None) -> str | None:
    """``path`` as an absolute local path (globs kept), or unchanged when it is a URL (``s3://``, ``memory://``,
    ``simplecache::s3://``): what the user typed means the same on every worker."""
    if not path or "://" in path or "::" in path:
        return path
    return os.path.abspath(os.path.expanduser(path))


def _guard(fn):
    import functools

    @functools.wraps(fn)
    def run(*a, **k):
        k = {name: _absolute(v) if name in PATH_PARAMETERS else v for name, v in k.items()}
        try:
            return fn(*a, **k)
        except click.ClickException:
            raise
        except (TCRExError, OSError, ValueError, KeyError) as exc:
            from ..intake import short_error
            raise _Fail(cli_words(short_error(exc))) from None
    return run


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


#: ``--value-labels FILE`` on every command that writes text (issue #35): a codebook read by tcrex.intake.
_value_labels_option = click.option(
    "--value-labels", "value_labels_path", type=click.Path(exists=True, dir_okay=False),
    help="Codebook: CSV feature,value,label or JSON {feature: {value: label}}; texts then say "
         "'no checking account (A14)' instead of 'A14' (kept in the rules JSON).")


#: ``--class-names`` beside ``--value-labels`` (issue #39): the classes in words, as TCREx(class_names=...).
_class_names_option = click.option(
    "--class-names", "class_names_text",
    help="Names of the model's classes: JSON '{\"0\": \"rejected\", \"1\": \"approved\"}' or "
         "'0=rejected,1=approved'; texts then name the class ('approved') instead of its number (kept in the rules JSON).")


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
    """The codebook at ``path`` (None without one), read as untrusted input before any work starts."""
    if not path:
        return None
    from ..intake import read_codebook
    with open(path, "rb") as fh:
        return read_codebook(fh.read(), os.path.basename(path))


def _labelled(ex, path, book=None):
    """``ex`` with the codebook at ``path`` (or already read, ``book``) in force (labels for features or values
    the rules do not have are left out, each said on stderr); ``ex`` itself when no file is given."""
    if not path:
        return ex
    from ..intake import fit_codebook
    found = fit_codebook(_codebook(path) if book is None else book, ex.schema_)
    for note in found.notes:
        _say(f"value labels: {note}")
    _say(f"value labels: {found.n_labels} label(s) for {len(found.labels)} feature(s) from {path}")
    return ex.update(value_labels=found.labels)


def _group_labels(path, column) -> dict | None:
    """The codebook's labels of the grouping ``column`` (None without a file or a column): kept for naming groups
    even when the column is not a feature (``fit_codebook`` leaves non-features out of the explainer)."""
    if not path or not column:
        return None
    return _codebook(path).get(column)


def _labelled_rules(rules: str, path, class_names_text=None) -> str:
    """A rules JSON with the codebook at ``path`` and the ``--class-names`` in force (the text itself when
    neither is given)."""
    names = _class_names(class_names_text)
    if not path and not names:
        return rules
    from .. import TCREx
    ex = _labelled(TCREx.from_json(rules), path)
    if names:
        ex = ex.update(class_names=names)
    return ex.to_json(effectiveness=ex.effectiveness_)


def _model(path, threads=None):
    from ..distributed import load_model_file
    try:
        return load_model_file(path, threads)
    except TCRExError as exc:
        raise type(exc)(f"{path}: {exc}") from None


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


def _split(frame, y_col, features, drop=()):
    """The features (``features`` in that order, else every column but ``y_col`` and ``drop``) and outputs."""
    if y_col and y_col not in frame.columns:
        raise _Fail(f"column {y_col!r} is not in the data")
    if features is not None:
        X = frame[features]
    else:
        X = frame.drop(columns=[c for c in [y_col, *drop] if c and c in frame.columns])
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


def _run_files(fn, jobs, kw, workers, scheduler, verb, model_path=None, reference_rows=None, names=(), out=None):
    """``fn(*job, **kw)`` for every job (the second argument is the input file), in one process, a local pool of
    ``workers`` processes or on the Dask cluster at ``scheduler``; yields the results in job order. Whatever goes
    wrong with a job (a bad file, a model fault, a worker lost by the pool or the cluster) stops the run with a
    message naming its file.

    Before any job, one of the workers checks the run (:func:`tcrex.distributed.check_run`): the model file
    ``model_path`` loads (a refused file stops the run with one message naming it; the worker's later jobs reuse
    the model: the driver starts no model sandbox of its own, which on a pool of two on two cores was a third
    sandbox start competing with the workers'), the ``reference_rows`` (features ``names``) read, and the output
    folder ``out`` is this client's folder and writable there. ``kw`` then gains the digests of the model file
    (``model_digest``) and of the reference rows (``reference_digests``): every job uses exactly those contents
    (a file replaced during the run is refused), and the caller names them in its outputs."""
    marker = [_mark_output(out)] if out else []
    try:
        yield from _run_jobs(fn, jobs, kw, workers, scheduler, verb, model_path, reference_rows, names, out, marker)
    finally:
        if marker:  # the run stopped before the check confirmed the folder
            _unmark_output(out, marker.pop(), confirm=False)


def _run_jobs(fn, jobs, kw, workers, scheduler, verb, model_path, reference_rows, names, out, marker):
    """:func:`_run_files` once the output folder is marked (``marker``: its marker, emptied once confirmed)."""
    from ..distributed import FileError, check_run, located

    threads = kw.get("model_threads")
    checks = model_path or reference_rows or out
    run_args = (model_path, threads, reference_rows, tuple(names), out, marker[0] if marker else None)

    def check(get):
        try:
            found = get()
        except (TCRExError, OSError, ValueError, KeyError):
            raise  # said as for any other input (the message names the file)
        except Exception as exc:  # noqa: BLE001 - a worker lost by the pool or the cluster
            raise _Fail(f"{model_path or reference_rows or out}: {type(exc).__name__}: {exc}") from None
        if marker:
            _unmark_output(out, marker.pop())
        if "model" in found:
            kw["model_digest"] = found["model"]
        if "reference_rows" in found:
            kw["reference_digests"] = found["reference_rows"]

    def result(job, get):
        try:
            return get()
        except FileError:
            raise
        except Exception as exc:  # noqa: BLE001 - Dask/pool failures (KilledWorker, BrokenProcessPool, ...)
            raise located(exc, job[1]) from None

    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise _Fail("--scheduler needs Dask's distributed package (pip install 'tcrex[dask]')") from None
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise _Fail(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
        with client:
            if checks:
                check(client.submit(check_run, *run_args, pure=False).result)
            futs = [client.submit(fn, *job, pure=False, **kw) for job in jobs]
            try:
                for job, f in zip(jobs, futs):
                    yield result(job, f.result)
                    _say(f"{verb} {job[1]}")
            finally:
                client.cancel(futs)
    elif workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers) as pool:
            if checks:
                check(pool.submit(check_run, *run_args).result)
            futs = [pool.submit(fn, *job, **kw) for job in jobs]
            try:
                for job, f in zip(jobs, futs):
                    yield result(job, f.result)
                    _say(f"{verb} {job[1]}")
            finally:
                for f in futs:
                    f.cancel()
    else:
        if checks:
            check(lambda: check_run(*run_args))
        for job in jobs:
            yield result(job, lambda: fn(*job, **kw))
            _say(f"{verb} {job[1]}")


def _mark_output(out: str) -> str:
    """Create the output folder ``out`` and a marker file in it that a worker must see (:func:`check_run`): a
    worker on another machine, or one resolving a path in its own folder, does not."""
    import uuid

    import fsspec
    fs, root = fsspec.core.url_to_fs(out)
    fs.makedirs(root, exist_ok=True)
    marker = f".tcrex-check-{uuid.uuid4().hex}"
    fs.touch(f"{root.rstrip('/')}/{marker}")
    return marker


def _unmark_output(out: str, marker: str, confirm: bool = True) -> None:
    """Remove the marker of :func:`_mark_output` and the file the worker wrote beside it; ``confirm``: refuse the
    run when that file is not there (the worker wrote into a folder this client does not see, e.g. its own copy
    of ``memory://``)."""
    import fsspec
    fs, root = fsspec.core.url_to_fs(out)
    seen = f"{root.rstrip('/')}/{marker}.seen"
    written = fs.exists(seen)
    for path in (f"{root.rstrip('/')}/{marker}", seen):
        if fs.exists(path):
            fs.rm(path)
    if confirm and not written:
        raise _Fail(f"the output folder {out} is not the one the workers write to (a file a worker wrote there "
                    "cannot be seen from here); give a folder or URL every worker and this client share")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """T-CREx counterfactual rules: fit rules, explain and audit data sets of any size."""


@main.command()
@click.option("--data", required=True, help="Parquet/CSV file, glob, directory or fsspec URL.")
@click.option("--y-pred-column", "y_col", help="Column with the model's outputs (dropped from the features).")
@click.option("--model", "model_path", help="Model file (XGBoost JSON/UBJ, skops, ONNX), loaded safely.")
@click.option("--drop-column", "drop", multiple=True, help="Column to leave out of the features (repeatable).")
@click.option("--target", help="Target class or regression spec (as TCREx(target=...)).")
@click.option("--rho", type=float, default=0.02, show_default=True)
@click.option("--tau", type=float, default=0.9, show_default=True)
@click.option("--trees", type=int, default=1, show_default=True)
@click.option("--grower", type=click.Choice(["auto", "exact", "hist"]), default="auto", show_default=True,
              help="Surrogate grower (TCREx(grower=...)): exact CART, histogram, or auto.")
@click.option("--constraints", "constraints_path", type=click.Path(exists=True, dir_okay=False),
              help="JSON file {feature: constraint}.")
@click.option("--max-changes", type=click.IntRange(min=0), default=3, show_default=True,
              help="No verified advice changes more features (TCREx(max_changes=...)); 0: no limit.")
@click.option("--sample", type=click.IntRange(min=1),
              help="Fit on a uniform sample of N rows, then recount every candidate rule on all rows (streamed).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=262_144, show_default=True,
              help="Rows per batch when streaming the files (sampling and recount).")
@click.option("--out", required=True, help="Where to write the rules JSON.")
@_value_labels_option
@_class_names_option
@_guard
def fit(data, y_col, model_path, drop, target, rho, tau, trees, grower, constraints_path, max_changes, sample, seed,
        batch_size, out, value_labels_path=None, class_names_text=None):
    """Fit rules and metarules on DATA and write them as JSON."""
    from .. import TCREx
    from ..distributed import (Overlapped, column_names, count_rows, expand_paths, iter_frames, located, numbered,
                              sample_rows, start_outputs)
    t0 = time.perf_counter()
    if (y_col is None) == (model_path is None):
        raise _Fail("give exactly one of --y-pred-column and --model")
    book = _codebook(value_labels_path)
    class_names = _class_names(class_names_text)  # read before any work starts, as the codebook
    model = _model(model_path, _cores()) if model_path else None
    srcs = expand_paths(data)
    totals = [count_rows(s) for s in srcs] if sample else None
    features = None
    if sample and sample < sum(totals):
        if model is not None:  # the sampling pass reads only the model's inputs (when its file names them)
            features = _model_features(model, column_names(srcs[0]), [y_col, *drop], data)
        frame, total = sample_rows(srcs, sample, seed, batch_size=batch_size, totals=totals, columns=features)
        _say(f"fitting on a uniform sample of {sample:,} of {total:,} rows (streamed)")
    else:
        frame, sample = _read_all(data), None
        _say(f"read {len(frame):,} rows")
        if model is not None:
            features = _model_features(model, list(frame.columns), [y_col, *drop], data)
    missing = [c for c in drop if c not in frame.columns]
    if features is None and missing:  # (with the model's inputs the frame holds only those)
        raise _Fail(f"--drop-column names column(s) {', '.join(map(repr, missing))} that are not in {data}")
    X, y = _split(frame, y_col, features, drop)
    if features is None:
        _warn_non_features(X)
    if model is not None:
        _check_model_kinds(model, X, data)
    cons = json.load(open(constraints_path)) if constraints_path else None
    ex = TCREx(rho=rho, tau=tau, n_trees=trees, grower=grower, target=_target(target), constraints=cons,
               max_changes=max_changes or None, class_names=class_names)
    ex.fit(X, model) if model is not None else ex.fit(X, y_pred=y)
    if sample:
        counts = None
        names = list(ex.schema_.names)
        cols = names + ([y_col] if y_col else [])
        for src in srcs:  # one streamed pass: the counts of every batch add up

            def start(df, src=src):  # the batch's outputs: its column, or the model (predicting the next batch
                Xb, yb = _split(df, y_col, names)  # while this one is counted)
                if model is None:
                    return lambda: yb
                _check_model_kinds(model, Xb, src)
                return start_outputs(ex, Xb, model)

            run = Overlapped(numbered(iter_frames(src, batch_size=batch_size, columns=cols, dictionary=names)),
                             start)
            try:
                for (_, df), yb in run:
                    c = ex.candidate_counts(df[names], y_pred=yb)
                    counts = c if counts is None else counts + c
            except (TCRExError, OSError, ValueError, KeyError) as exc:
                raise located(exc, src, run.rows) from None
            finally:
                run.close()
        ex.recount(counts)
        _say(f"recounted every candidate rule on all {counts.n_rows:,} rows: "
             f"{ex.recount_summary_['rules_changed']} rule(s) changed")
    _labelled(ex, value_labels_path, book)
    import fsspec
    with fsspec.open(out, "w") as fh:
        fh.write(ex.to_json())
    n_rules = len(ex.rules_frame())
    _say(f"wrote {n_rules} rules to {out} in {time.perf_counter() - t0:.1f}s")


@main.command("suggest-constraints")
@click.argument("data")
@click.option("--drop-column", "drop", multiple=True,
              help="Column that is not a feature (the label, the model's outputs; repeatable).")
@click.option("--with-reasons", is_flag=True,
              help="Print {feature: {constraint, reason}} instead of the plain constraints.")
@click.option("--out", help="Write the JSON to this file instead of stdout.")
@_guard
def suggest_constraints_command(data, drop, with_reasons, out):
    """Suggest actionability constraints for the features of DATA (protected attributes and past events
    immutable, time that has passed increase only), as JSON for `tcrex fit --constraints`. The reason for each
    suggestion goes to stderr; review them before using the file."""
    from ..constraints import constraints_from_suggestions, suggest_constraints
    frame = _read_all(data)
    missing = [c for c in drop if c not in frame.columns]
    if missing:
        raise _Fail(f"--drop-column names column(s) {missing} that are not in the data")
    found = suggest_constraints(frame.drop(columns=list(drop)))
    for feature, s in found.items():
        _say(f"{feature}: {s['constraint']} — {s['reason']}")
    if not found:
        _say("no suggestion: no column name or value looks like a protected attribute, a past event or elapsed time")
    text = json.dumps(found if with_reasons else constraints_from_suggestions(found), indent=2, ensure_ascii=False)
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        _say(f"wrote {len(found)} suggestion(s) to {out}")
    else:
        click.echo(text)


@main.command()
@click.option("--rules", "rules_path", required=True, help="Rules JSON written by `tcrex fit`.")
@click.option("--data", required=True, help="Parquet/CSV file, glob, directory or fsspec URL.")
@click.option("--y-pred-column", "y_col")
@click.option("--model", "model_path")
@click.option("--out", required=True, help="Output directory (local or fsspec URL): one Parquet per input file.")
@click.option("--keep-columns", default="", help="Comma-separated input columns to copy into the output.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Local processes.")
@click.option("--scheduler", help="Address of an existing Dask scheduler, tcp://HOST:PORT.")
@click.option("--batch-size", type=click.IntRange(min=1), default=262_144, show_default=True)
@click.option("--verified", is_flag=True,
              help="Write each row's verified counterfactual (TCREx.counterfactuals(verify=True): the point, valid, "
                   "source, recourse, changed, recommended_rule, text) instead of its explanation; needs --model.")
@click.option("--reference-rows", "reference_rows",
              help="Parquet/CSV file(s) of reference rows (the rows the rules were fitted on) for the search beyond "
                   "the rules when verifying recourse: a rules JSON holds no rows, so without them people whose rules "
                   "have no confirmed point count as 'none' (in memory the fit rows are used).")
@_value_labels_option
@_class_names_option
@_guard
def explain(rules_path, data, y_col, model_path, out, keep_columns, workers, scheduler, batch_size, verified,
            reference_rows, value_labels_path=None, class_names_text=None):
    """Explain every row of DATA into OUT/<input name>.parquet (rows in input order)."""
    if model_path and y_col is None and workers == 1 and not scheduler:
        # first of all, before pandas and the engine are imported: the model's sandbox worker starts (and imports its
        # libraries) on the other core meanwhile
        from ..intake import start_model_worker
        start_model_worker(posixpath.basename(model_path), _model_threads(workers, scheduler))
    import fsspec

    from ..distributed import expand_paths, explain_parquet_file, load_model_file_soon, load_rules
    if (y_col is None) == (model_path is None):
        raise _Fail("give exactly one of --y-pred-column and --model")
    if verified and not model_path:
        raise _Fail("--verified checks every counterfactual on the model: give --model (not --y-pred-column)")
    if model_path and workers == 1 and not scheduler:  # its sandbox starts while the engine is imported
        load_model_file_soon(model_path, _model_threads(workers, scheduler))
    with fsspec.open(rules_path, "r") as fh:
        rules = fh.read()
    load_rules(rules)  # fail early on a bad file
    rules = _labelled_rules(rules, value_labels_path, class_names_text)
    keep = [c.strip() for c in keep_columns.split(",") if c.strip()]
    srcs = expand_paths(data)
    base = out.rstrip("/")
    jobs = [(src, f"{base}/{name}") for src, name in zip(srcs, _output_names(srcs))]
    if reference_rows and not verified:
        raise _Fail("--reference-rows serves the verification of --verified; add --verified")
    kw = dict(y_pred=y_col, model_path=model_path, keep=keep, batch_size=batch_size, verified=verified,
              model_threads=_model_threads(workers, scheduler), reference_rows=reference_rows)
    t0 = time.perf_counter()
    total = sum(_run_files(explain_parquet_file, [(rules, s, d) for s, d in jobs], kw, workers, scheduler,
                           "explained", model_path=model_path, reference_rows=reference_rows,
                           names=load_rules(rules).schema_.names, out=out))  # a refused model stops it before any file
    dt = time.perf_counter() - t0
    if verified and not reference_rows:  # each output's metadata says how many of its rows it affected
        from ..distributed import NO_REFERENCE_NOT_DONE
        _verification(None, {"rows": sum(_rows_affected(dst) for _, dst in jobs)},
                      "{rows} people needing recourse", NO_REFERENCE_NOT_DONE)
    _say(f"{total:,} rows from {len(jobs)} file(s) in {dt:.1f}s ({total / max(dt, 1e-9):,.0f} rows/s) -> {base}/")


def _rows_affected(dst: str) -> int:
    """The rows an ``explain --verified`` output's metadata counts as affected by the missing reference rows."""
    import fsspec
    import pyarrow.parquet as pq

    from ..distributed import VERIFICATION_KEY
    with fsspec.open(dst, "rb") as fh:
        meta = pq.read_metadata(fh).metadata or {}
    return int(json.loads(meta.get(VERIFICATION_KEY, b"{}")).get("rows_affected") or 0)


@main.command()
@click.option("--rules", "rules_path", required=True, help="Rules JSON written by `tcrex fit`.")
@click.option("--data", required=True, help="Parquet/CSV file, glob, directory or fsspec URL.")
@click.option("--y-pred-column", "y_col")
@click.option("--model", "model_path")
@click.option("--group-column", required=True)
@click.option("--target", help="Favourable class (or regression spec) the audit measures recourse towards.")
@click.option("--reference", help="Reference group (default: the largest).")
@click.option("--n-boot", type=int, default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Local processes.")
@click.option("--scheduler", help="Address of an existing Dask scheduler, tcp://HOST:PORT.")
@click.option("--batch-size", type=click.IntRange(min=1), default=262_144, show_default=True)
@click.option("--out", required=True, help="Where to write the audit JSON.")
@click.option("--reference-rows", "reference_rows",
              help="Parquet/CSV file(s) of reference rows (the rows the rules were fitted on) for the search beyond "
                   "the rules when verifying recourse: a rules JSON holds no rows, so without them people whose rules "
                   "have no confirmed point count as 'none' (in memory the fit rows are used).")
@_value_labels_option
@_class_names_option
@_guard
def audit(rules_path, data, y_col, model_path, group_column, target, reference, n_boot, seed, workers, scheduler,
          batch_size, out, reference_rows, value_labels_path=None, class_names_text=None):
    """Subgroup audit of recourse on DATA grouped by --group-column, as JSON.

    Every file is counted apart (per group: statuses, changes, rules, features to change or keep, verified
    recourse) and the counts are added; the audit and its bootstrap run from these counts, never from rows.
    """
    import fsspec

    from ..audit import audit_from_counts
    from ..distributed import audit_file, expand_paths, load_rules, provenance
    if (y_col is None) == (model_path is None):
        raise _Fail("give exactly one of --y-pred-column and --model")
    with fsspec.open(rules_path, "r") as fh:
        rules = fh.read()
    load_rules(rules)  # fail early on a bad file
    rules = _labelled_rules(rules, value_labels_path, class_names_text)
    srcs = expand_paths(data)
    if reference_rows and not model_path:
        raise _Fail("--reference-rows serves the verification of recourse on the model: give --model")
    kw = dict(groups=group_column, y_pred=y_col, model_path=model_path, target=_target(target),
              batch_size=batch_size, model_threads=_model_threads(workers, scheduler), reference_rows=reference_rows,
              group_labels=_group_labels(value_labels_path, group_column))
    counts = sum(_run_files(audit_file, [(rules, s) for s in srcs], kw, workers, scheduler, "counted",
                            model_path=model_path, reference_rows=reference_rows,
                            names=load_rules(rules).schema_.names))
    res = audit_from_counts(counts, n_boot=n_boot, reference=reference, random_state=seed)
    doc = audit_json(res)
    if model_path:
        from ..distributed import NO_REFERENCE_NOT_DONE
        cells = counts.cells
        doc["verification"] = _verification(reference_rows, {"rows": int(cells.loc[
            cells["needs_recourse"].astype(bool) & (cells["works"] == 0), "n"].sum())},
            "{rows} people needing recourse", NO_REFERENCE_NOT_DONE)
    doc["used"] = provenance(rules, model_path, kw.get("model_digest"), kw.get("reference_digests"))
    with fsspec.open(out, "w") as fh:
        json.dump(doc, fh, indent=1, default=str)
    _say(f"audited {counts.n_rows:,} rows in {len(res.groups)} groups -> {out}")


@main.command()
@click.option("--rules", "rules_path", required=True, help="Rules JSON of model A (written by `tcrex fit`).")
@click.option("--model", "model_path", required=True, help="Model A file (XGBoost JSON/UBJ, skops, ONNX).")
@click.option("--model-b", "model_b_path", required=True, help="Model B file, on the same features and task.")
@click.option("--rules-b", "rules_b_path",
              help="Rules JSON of model B; default: fitted here with A's parameters on model B (see --fit-rows-b).")
@click.option("--reference-rows", "reference_rows",
              help="Parquet/CSV file(s) of the rows model A's rules were fitted on: both models' searches beyond the "
                   "rules, the distances and the re-check of A's rules use them, and B's rules are fitted on them by "
                   "default (compare_models(reference_rows=); in memory, an explainer's own fit rows). A rules JSON "
                   "holds no rows: without them people whose rules have no confirmed point count as 'none'.")
@click.option("--fit-rows-b", "fit_rows_b",
              help="Without --rules-b: Parquet/CSV file(s) to fit B's rules on; default the --reference-rows, else "
                   "the compared rows (as compare_models).")
@click.option("--fit-b-sample", type=click.IntRange(min=1),
              help="Without --rules-b: fit B's rules on a uniform sample of N of those rows instead of all of them.")
@click.option("--data", required=True, help="Parquet/CSV file, glob, directory or fsspec URL.")
@click.option("--group-column", help="Column grouping the people (per-group gaps with bootstrap intervals).")
@click.option("--target", help="Favourable class (or regression interval); default: the target in the rules.")
@click.option("--reference", help="Reference group (default: the largest); 'rest' for everyone else.")
@click.option("--n-boot", type=int, default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap and of --fit-b-sample.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Local processes.")
@click.option("--scheduler", help="Address of an existing Dask scheduler, tcp://HOST:PORT.")
@click.option("--batch-size", type=click.IntRange(min=1), default=262_144, show_default=True)
@click.option("--out", required=True, help="Where to write the comparison JSON.")
@click.option("--people-out", help="Directory for people-level Parquet files (one per input file).")
@_value_labels_option
@_class_names_option
@_guard
def compare(rules_path, model_path, model_b_path, rules_b_path, reference_rows, fit_rows_b, fit_b_sample, data,
            group_column, target, reference, n_boot, seed, workers, scheduler, batch_size, out, people_out,
            value_labels_path=None, class_names_text=None):
    """Who keeps, loses or gains verified recourse when model A is replaced by model B, as JSON.

    Every file is counted apart (per group and change: verified under each model, A's advice holding under B;
    per rule of A: its rows and points under B) and the counts are added; the summary, the per-group bootstrap and
    the findings run from these counts. With the same rules, models, rows and --reference-rows (A's fit rows) the
    answer is compare_models' in memory.
    """
    import fsspec

    from .. import TCREx
    from ..compare import COMPARED_ROWS, REFERENCE_ROWS, check_models, compare_from_counts, favourable_target
    from ..distributed import (count_rows, expand_paths, iter_frames, load_rules, model_file, provenance,
                              reference_files, sample_rows)
    with fsspec.open(rules_path, "r") as fh:
        rules = _labelled_rules(fh.read(), value_labels_path, class_names_text)
    ex_a = load_rules(rules)  # fail early on a bad file
    spec = favourable_target(ex_a, _target(target))
    model_a, model_b = _model(model_path), _model(model_b_path)
    names = list(ex_a.schema_.names)
    srcs = expand_paths(data)
    head = next(iter_frames(srcs[0], batch_size=256), None)
    if head is not None:  # other features, another task or unknown classes: said before any file is compared
        check_models(ex_a, head, model_b, model_a)
    if rules_b_path:
        if fit_rows_b or fit_b_sample:
            raise _Fail("--fit-rows-b and --fit-b-sample say how to fit B's rules; with --rules-b they are given")
        with fsspec.open(rules_b_path, "r") as fh:
            rules_b = _labelled_rules(fh.read(), value_labels_path, class_names_text)
        load_rules(rules_b)
        fit_on = f"given (--rules-b {rules_b_path})"
    else:  # as compare_models: A's fit rows (the reference rows) when known, else the compared rows
        b_spec = fit_rows_b or reference_rows or data
        what = (f"the rows of {fit_rows_b} (--fit-rows-b)" if fit_rows_b else REFERENCE_ROWS if reference_rows
                else COMPARED_ROWS)
        b_srcs = expand_paths(b_spec)
        totals = [count_rows(s) for s in b_srcs] if fit_b_sample else None
        if fit_b_sample and fit_b_sample < sum(totals):
            frame, total = sample_rows(b_srcs, fit_b_sample, seed, batch_size=batch_size, totals=totals)
            rows_of = (f"rows of {fit_rows_b} (--fit-rows-b)" if fit_rows_b else "reference rows" if reference_rows
                       else "compared rows")
            fit_on = f"a uniform sample of {fit_b_sample:,} of the {total:,} {rows_of}"
        else:
            frame, fit_on = _read_all(b_spec), what
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise _Fail(f"{b_spec} lacks column(s) {missing[:20]} that the rules of model A explain")
        X = frame[names]
        # as compare_models does: A's parameters and task, model B asked once about the rows
        ex_b = TCREx(**{**ex_a.get_params(), "task": ex_a.task_, "class_names": None}).fit(
            X, y_pred=ex_a.outputs(X, model=model_b))
        rules_b = ex_b.to_json()
        _say(f"fitted model B's rules on {fit_on} ({len(X):,} rows of {b_spec}) with A's parameters "
             f"({len(ex_b.rules_frame())} rules)")
    people_jobs = [None] * len(srcs)
    if people_out:
        fs, _, (root,) = fsspec.get_fs_token_paths(people_out)
        fs.makedirs(root, exist_ok=True)
        base = people_out.rstrip("/")
        people_jobs = [f"{base}/{name}" for name in _output_names(srcs)]
    digest_a, digest_b = model_file(model_path)[1], model_file(model_b_path)[1]  # the models loaded above (cached)
    kw = dict(model_a_path=model_path, model_b_path=model_b_path, groups=group_column, target=spec,
              explainer_b_fit_on=fit_on, batch_size=batch_size, reference_rows=reference_rows,
              model_a_digest=digest_a, model_b_digest=digest_b,
              group_labels=_group_labels(value_labels_path, group_column))
    counts = sum(_run_files(_compare_job, [(rules, s, rules_b, d) for s, d in zip(srcs, people_jobs)], kw, workers,
                            scheduler, "compared", out=people_out))
    res = compare_from_counts(counts, n_boot=n_boot, reference=reference, random_state=seed)
    cells = counts.cells
    doc = json.loads(res.to_json(people=False))
    doc["verification"] = _verification(reference_rows, {
        "model_a": int(cells.loc[cells["needs_a"] & ~cells["verified_a"], "n"].sum()),
        "model_b": int(cells.loc[cells["needs_b"] & ~cells["verified_b"], "n"].sum())},
        "{model_a} people needing recourse under model A and {model_b} under model B",
        "no search beyond the rules and no distances were done")
    reference_digests = reference_files(reference_rows) if reference_rows else None
    doc["used"] = {"a": provenance(rules, model_path, digest_a, reference_digests),
                   "b": provenance(rules_b, model_b_path, digest_b, reference_digests)}
    with fsspec.open(out, "w") as fh:
        json.dump(doc, fh, indent=1, allow_nan=False, default=str)
    _say(res.headline())
    _say(f"compared {counts.n_rows:,} rows -> {out}" + (f" (people: {people_out.rstrip('/')}/)" if people_out else ""))


def _verification(reference_rows, affected: dict, counted: str, not_done: str) -> dict:
    """What verifying recourse on the model used and, without reference rows, what it could not do and how many
    rows that affected (``affected``: counts by name; ``counted``: the sentence naming them, with ``{name}``
    fields): said in ONE stderr line and returned for the output's metadata (``"verification"``), so a lower
    verified share never differs silently from the in-memory answer (which uses the explainer's fit rows)."""
    if reference_rows:
        return {"reference_rows": reference_rows, "not_done": None, "rows_affected": None}
    counts = {k: f"{v:,}" for k, v in affected.items()}
    _say(f"note: no --reference-rows, so {not_done}: {counted.format(**counts)} have no rule point the model "
         "confirms and count as 'none' (give the rows the rules were fitted on with --reference-rows for the "
         "in-memory answer)")
    return {"reference_rows": None, "not_done": not_done,
            "rows_affected": affected["rows"] if list(affected) == ["rows"] else affected,
            "rows_affected_are": "people needing recourse left without verified recourse (recourse 'none')"}


def _compare_job(rules_a, src, rules_b, people_dst, **kw):
    """One file of ``tcrex compare`` (the second argument is the input file, as ``_run_files`` reports it)."""
    from ..distributed import compare_file
    return compare_file(rules_a, rules_b, src, people_dst=people_dst, **kw)


def audit_json(res) -> dict:
    """The audit as the CLI writes it: ``AuditResult.to_dict()`` with ``"groups"`` one record per group — ``n``
    all its rows, ``n_need_recourse`` those whose output is not in the target (the audit table's ``n``), then
    the table's other columns — and ``"group_labels"`` the labels in display order."""
    doc = res.to_dict()
    records = []
    for row in doc.pop("table"):
        row = dict(row)
        n_need, n_all = row.pop("n"), row.pop("n_total")
        records.append({"group": row.pop("group"), "n": n_all, "n_need_recourse": n_need, **row})
    doc["group_labels"], doc["groups"] = doc["groups"], records
    return doc


@main.command("check-model")
@click.argument("model_path")
@click.option("--data", help="Sample table to check the model against (as `tcrex fit --model` reads it).")
@click.option("--drop-column", "drop", multiple=True,
              help="Column that is not an input (a label, an id; repeatable), as for `tcrex fit`.")
@_guard
def check_model(model_path, data, drop):
    """Safe intake report for MODEL (exit 1 when it is refused or incompatible with --data).

    The data's columns are taken as `tcrex fit --model` takes them: the model's own inputs when its file names
    them (every other column left out, said in one line), else every column but the --drop-column ones."""
    from ..errors import ModelError
    try:
        m = _model(model_path)
    except ModelError as exc:
        click.echo(f"refused: {exc}")
        sys.exit(1)
    click.echo(f"accepted: {m.description}" if hasattr(m, "description") else "accepted")
    if data:
        from ..intake import check_compatibility
        frame = _read_all(data)
        missing = [c for c in drop if c not in frame.columns]
        if missing:
            raise _Fail(f"--drop-column names column(s) {', '.join(map(repr, missing))} that are not in {data}")
        X = frame.drop(columns=list(drop))
        names = m.feature_names
        if names is not None:  # as fit: the model's inputs; the others left out (a missing input is a problem below)
            left = [c for c in X.columns if c not in set(names)]
            if left:
                _say(f"features: the model's {len(names)} input(s); left out: {', '.join(map(str, left))}")
                X = X.drop(columns=left)
        else:
            _warn_non_features(X)
        rep = check_compatibility(m, X)
        click.echo(rep.message)
        if not rep.ok:
            if names is None and m.n_features is not None and X.shape[1] != m.n_features:
                click.echo("leave out the columns that are not inputs (a label, an id) with --drop-column")
            sys.exit(1)


@main.command("ui", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("streamlit_options", nargs=-1, type=click.UNPROCESSED)
def ui(streamlit_options):
    """Start the dashboard on the bundled loans sample (any `streamlit run` options, e.g. --server.port 8600).

    Needs the app extra: pip install 'tcrex[app]'."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None or importlib.util.find_spec("plotly") is None:
        raise _Fail("the dashboard needs Streamlit and plotly: pip install 'tcrex[app]'")
    from ..ui.launch import main as launch
    launch(list(streamlit_options))


@main.group("workspace")
def workspace_group():
    """Move dashboard workspaces between servers: export one as a zip, import a zip as a new workspace.

    The store is the one the dashboard uses: TCREX_STORE (a PostgreSQL URL or an SQLite folder), else
    TCREX_STATE_DIR (docs/deployment.md, "Workspaces")."""


@workspace_group.command("export")
@click.argument("workspace_id")
@click.option("--out", required=True, type=click.Path(dir_okay=False, writable=True),
              help="The zip file to write (settings and uploads, versioned).")
@_guard
def workspace_export(workspace_id, out):
    """Write the workspace WORKSPACE_ID (its editing or read-only link id) to a zip file."""
    from ..workspace import WorkspaceStore, export_workspace
    data = export_workspace(WorkspaceStore.from_env(), workspace_id)
    with open(out, "wb") as fh:
        fh.write(data)
    _say(f"wrote {os.path.abspath(out)} ({len(data):,} bytes)")


@workspace_group.command("import")
@click.argument("zip_path", type=click.Path(exists=True, dir_okay=False))
@_guard
def workspace_import(zip_path):
    """Import a workspace zip as a new workspace; prints its editing id and its read-only id."""
    from ..workspace import WorkspaceStore, import_workspace
    with open(zip_path, "rb") as fh:
        ws = import_workspace(WorkspaceStore.from_env(), fh.read())
    click.echo(f"id: {ws.id}")
    click.echo(f"read-only id: {ws.view_id}")
    _say("open it with ?ws=<id> on the dashboard's address")


if __name__ == "__main__":  # pragma: no cover
    main()
