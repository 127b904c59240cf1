"""``tcrex fit`` (rules and metarules as JSON, on all rows or a sample recounted on all of them) and ``tcrex
suggest-constraints``.
"""
from __future__ import annotations

import json
import time

import click

from ._common import (_check_model_kinds, _class_names, _class_names_option, _codebook, _cores, _data_option, _Fail,
                      _dictionary, _dictionary_option,
                      _guard, _labelled, main, _model, _model_features, _read_all, _say, _split, _target,
                      _value_labels_option, _warn_non_features)
from ..errors import TCRExError


@main.command()
@_data_option
@click.option("--y-pred-column", "y_col", help="Column with the model's outputs (dropped from the features).")
@click.option("--model", "model_path", help="Model file (XGBoost JSON/UBJ, LightGBM .txt, CatBoost .cbm/JSON, skops, ONNX), loaded safely.")
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
@_dictionary_option
@_guard
def fit(data, y_col, model_path, drop, target, rho, tau, trees, grower, constraints_path, max_changes, sample, seed,
        batch_size, out, value_labels_path=None, class_names_text=None, dictionary_path=None):
    """Fit rules and metarules on DATA and write them as JSON."""
    from .. import TCREx
    from ..distributed import (Overlapped, column_names, count_rows, expand_paths, iter_frames, located, numbered,
                              sample_rows, start_outputs)
    t0 = time.perf_counter()
    if (y_col is None) == (model_path is None):
        raise _Fail("give exactly one of --y-pred-column and --model")
    book = _codebook(value_labels_path)
    class_names = _class_names(class_names_text)  # read before any work starts, as the codebook
    dictionary = _dictionary(dictionary_path)
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
    X, y = _split(frame, y_col, features, drop, data)
    if features is None:
        _warn_non_features(X)
    if model is not None:
        _check_model_kinds(model, X, data)
    cons = json.load(open(constraints_path)) if constraints_path else None  # None: the dictionary's, if any
    ex = TCREx(rho=rho, tau=tau, n_trees=trees, grower=grower, target=_target(target), constraints=cons,
               max_changes=max_changes or None, class_names=class_names, dictionary=dictionary)
    ex.fit(X, model) if model is not None else ex.fit(X, y_pred=y)
    _say_dictionary(ex)
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
    findings = ex.fit_findings()  # a degenerate explanation said at once, with a checked suggestion
    for f in findings:
        _say(f"finding: {f.text} {f.suggestion_text()}")
    ex = _labelled(ex, value_labels_path, book, (y_col, *drop))
    import fsspec
    with fsspec.open(out, "w") as fh:
        fh.write(ex.to_json(findings=findings))
    n_rules = len(ex.rules_frame())
    _say(f"wrote {n_rules} rules to {out} in {time.perf_counter() - t0:.1f}s")


def _say_dictionary(ex) -> None:
    """What the fit did with the dictionary, on stderr: the suggested constraints it applied (with reasons) and
    its notes (parts not used, labelled numbers that may be codes)."""
    for feature, reason in ex.suggested_constraints_.items():
        _say(f"constraint (suggested, applied): {feature}: {ex.constraints_.to_dict()[feature].get('kind')} — {reason}")
    for note in ex.dictionary_notes_:
        _say(f"dictionary: {note}")


@main.command("dictionary")
@click.option("--data", required=True, help="Parquet/CSV file, glob, directory or fsspec URL.")
@click.option("--drop-column", "drop", multiple=True,
              help="Column that is not a feature (the label, the model's outputs; repeatable).")
@click.option("--dictionary", "dictionary_path", type=click.Path(exists=True, dir_okay=False),
              help="A dictionary to start from: what it declares wins over every suggestion.")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "table-schema"]), default=None,
              help="Output format (default: from --out's extension, else json).")
@click.option("--out", help="Write the dictionary to this file instead of stdout.")
@_guard
def dictionary_command(data, drop, dictionary_path, fmt, out):
    """Print (or write) the data dictionary DATA implies, for editing: each column's kind, candidate special
    codes (values that are codes, not numbers), history columns and suggested actionability. Each suggestion's
    reason goes to stderr; review them, then give the file to `tcrex fit --dictionary`."""
    from ..dictionary import suggest, to_csv_text, to_table_schema
    given = _dictionary(dictionary_path)
    frame = _read_all(data)
    missing = [c for c in drop if c not in frame.columns]
    if missing:
        raise _Fail(f"--drop-column names column(s) {', '.join(map(repr, missing))} that are not in {data}")
    found = suggest(frame.drop(columns=list(drop)), given)
    for s in found.items:
        _say(f"{s.feature}: {s.field} {s.value} — {s.reason}")
    if not found.items:
        _say("no suggestion: no codes, history columns or protected attributes found")
    fmt = fmt or ("csv" if (out or "").lower().endswith(".csv") else "json")
    d = found.dictionary
    text = (to_csv_text(d) if fmt == "csv" else
            json.dumps(to_table_schema(d), indent=2, ensure_ascii=False) + "\n" if fmt == "table-schema" else
            d.to_json(indent=2) + "\n")
    if out:
        from ..outputs import atomic_output
        with atomic_output(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        _say(f"wrote the dictionary of {len(d)} column(s) ({len(found.items)} suggestion(s)) to {out}")
    else:
        click.echo(text, nl=False)


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
