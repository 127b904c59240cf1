"""``tcrex explain``: every row's explanation, or with ``--verified`` its counterfactual checked on the model, one
Parquet file per input file.
"""
from __future__ import annotations

import posixpath
import time

import click

from ._common import (_rules_text, _class_names_option, _data_option, _dictionary_option, _Fail, _guard,
                      _labelled_rules, main, _model_threads, _output_names, _reference_rows_option, _run_options,
                      _run_options_of, _say, _value_labels_option)
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
@_guard(folders=("out", "people_out"))
def explain(rules_path, data, y_col, model_path, out, keep_columns, workers, scheduler, batch_size, progress, verified,
            reference_rows, value_labels_path=None, class_names_text=None, dictionary_path=None):
    """Explain every row of DATA into OUT/<input name>.parquet (rows in input order)."""
    if model_path and y_col is None and workers == 1 and not scheduler:
        # first of all, before pandas and the engine are imported: the model's sandbox worker starts (and imports its
        # libraries) on the other core meanwhile
        from ..intake import start_model_worker
        start_model_worker(posixpath.basename(model_path), _model_threads(workers, scheduler))

    from ..distributed import (RunCheck, check_kept_columns, expand_paths, explain_parquet_file, load_model_file_soon,
                              load_rules)
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
    check_kept_columns(load_rules(rules), keep, verified, "--keep-columns")  # before any file is read or written
    srcs = expand_paths(data)
    base = out.rstrip("/")
    jobs = [(src, f"{base}/{name}") for src, name in zip(srcs, _output_names(srcs))]
    if reference_rows and not verified:
        raise _Fail("--reference-rows serves the verification of --verified; add --verified")
    opts = _run_options_of(workers, scheduler, batch_size, progress, reference_rows)
    kw = dict(y_pred=y_col, model_path=model_path, keep=keep, verified=verified,
              **opts.job_kwargs("batch_size", "model_threads", "reference_rows", "progress"))
    t0 = time.perf_counter()
    record = {}
    check = RunCheck(model_path, reference_rows, tuple(load_rules(rules).schema_.names), out)
    total = sum(_run_files(explain_parquet_file, [(rules, s, d) for s, d in jobs], kw, opts, "explained", check,
                           record))  # a refused model stops it before any file
    dt = time.perf_counter() - t0
    from ..outputs import remove_partials
    for _, dst in jobs:  # what workers killed mid-file left (their jobs were run again)
        remove_partials(dst)
    _write_run_record(base, {"rows": total, "files": [d for _, d in jobs], "seconds": round(dt, 3),
                             "workers": workers, "scheduler": scheduler, **record})
    if verified and not reference_rows:  # each output's metadata says how many of its rows it affected
        from ..distributed import NO_REFERENCE_NOT_DONE
        _verification(None, {"rows": sum(_rows_affected(dst) for _, dst in jobs)},
                      "{rows} people needing recourse", NO_REFERENCE_NOT_DONE)
    _say(f"{total:,} rows from {len(jobs)} file(s) in {dt:.1f}s ({total / max(dt, 1e-9):,.0f} rows/s) -> {base}/")


#: The run's record in its output folder (skipped as an input, as pyarrow and Dask skip ``_`` files): what it
#: wrote and what it met (``workers_lost``: Dask workers lost while running its jobs, which were run again).
RUN_RECORD = "_tcrex_run.json"


def _write_run_record(base: str, record: dict) -> None:
    import json

    from ..outputs import atomic_output
    with atomic_output(f"{base}/{RUN_RECORD}", "w") as fh:
        json.dump(record, fh, indent=1, default=str)
