"""``tcrex explain``: every row's explanation, or with ``--verified`` its counterfactual checked on the model, one
Parquet file per input file.
"""
from __future__ import annotations

import posixpath
import time

import click

from ._common import (_rules_text, _class_names_option, _data_option, _dictionary_option, _Fail, _guard, _labelled_rules,
                      main, _model_threads,
                      _output_names, _reference_rows_option, _run_options, _say, _value_labels_option)
from ._runs import _rows_affected, _run_files, _verification


@main.command()
@click.option("--rules", "rules_path", required=True, help="Rules JSON written by `tcrex fit`.")
@_data_option
@click.option("--y-pred-column", "y_col")
@click.option("--model", "model_path")
@click.option("--out", required=True, help="Output directory (local or fsspec URL): one Parquet per input file.")
@click.option("--keep-columns", default="", help="Comma-separated input columns to copy into the output.")
@_run_options
@click.option("--verified", is_flag=True,
              help="Write each row's verified counterfactual (TCREx.counterfactuals(verify=True): the point, valid, "
                   "source, recourse, changed, recommended_rule, text) instead of its explanation; needs --model.")
@_reference_rows_option
@_value_labels_option
@_class_names_option
@_dictionary_option
@_guard
def explain(rules_path, data, y_col, model_path, out, keep_columns, workers, scheduler, batch_size, verified,
            reference_rows, value_labels_path=None, class_names_text=None, dictionary_path=None):
    """Explain every row of DATA into OUT/<input name>.parquet (rows in input order)."""
    if model_path and y_col is None and workers == 1 and not scheduler:
        # first of all, before pandas and the engine are imported: the model's sandbox worker starts (and imports its
        # libraries) on the other core meanwhile
        from ..intake import start_model_worker
        start_model_worker(posixpath.basename(model_path), _model_threads(workers, scheduler))

    from ..distributed import expand_paths, explain_parquet_file, load_model_file_soon, load_rules
    if (y_col is None) == (model_path is None):
        raise _Fail("give exactly one of --y-pred-column and --model")
    if verified and not model_path:
        raise _Fail("--verified checks every counterfactual on the model: give --model (not --y-pred-column)")
    if model_path and workers == 1 and not scheduler:  # its sandbox starts while the engine is imported
        load_model_file_soon(model_path, _model_threads(workers, scheduler))
    rules = _rules_text(rules_path)
    load_rules(rules)  # fail early on a bad file
    rules = _labelled_rules(rules, value_labels_path, class_names_text, dictionary_path)
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
