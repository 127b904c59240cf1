"""``tcrex audit`` (recourse across groups) and ``tcrex compare`` (who keeps, loses or gains verified recourse when
model A is replaced by model B): every file counted apart, the counts added, the bootstrap run from the counts.
"""
from __future__ import annotations

import json

import click

from ._common import (_dictionary_option, _rules_text, _bootstrap_options, _class_names_option, _data_option, _Fail,
                      _group_labels, _guard,
                      _labelled_rules, main, _model, _model_threads, _output_names, _read_all, _reference_rows_option,
                      _run_options, _say, _target, _value_labels_option)
from ._runs import audit_json, _compare_job, _run_files, _verification


@main.command()
@click.option("--rules", "rules_path", required=True, help="Rules JSON written by `tcrex fit`.")
@_data_option
@click.option("--y-pred-column", "y_col")
@click.option("--model", "model_path")
@click.option("--group-column", required=True)
@click.option("--target", help="Favourable class (or regression spec) the audit measures recourse towards.")
@click.option("--reference", help="Reference group (default: the largest).")
@_bootstrap_options("Seed of the bootstrap.")
@_run_options
@click.option("--out", required=True, help="Where to write the audit JSON.")
@_reference_rows_option
@_value_labels_option
@_class_names_option
@_dictionary_option
@_guard
def audit(rules_path, data, y_col, model_path, group_column, target, reference, n_boot, seed, workers, scheduler,
          batch_size, out, reference_rows, value_labels_path=None, class_names_text=None, dictionary_path=None):
    """Subgroup audit of recourse on DATA grouped by --group-column, as JSON.

    Every file is counted apart (per group: statuses, changes, rules, features to change or keep, verified
    recourse) and the counts are added; the audit and its bootstrap run from these counts, never from rows.
    """
    import fsspec

    from ..audit import audit_from_counts
    from ..distributed import audit_file, expand_paths, load_rules, provenance
    if (y_col is None) == (model_path is None):
        raise _Fail("give exactly one of --y-pred-column and --model")
    rules = _rules_text(rules_path)
    load_rules(rules)  # fail early on a bad file
    rules = _labelled_rules(rules, value_labels_path, class_names_text, dictionary_path)
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
@click.option("--model", "model_path", required=True, help="Model A file (XGBoost JSON/UBJ, LightGBM .txt, CatBoost .cbm/JSON, skops, ONNX).")
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
@_data_option
@click.option("--group-column", help="Column grouping the people (per-group gaps with bootstrap intervals).")
@click.option("--target", help="Favourable class (or regression interval); default: the target in the rules.")
@click.option("--reference", help="Reference group (default: the largest); 'rest' for everyone else.")
@_bootstrap_options("Seed of the bootstrap and of --fit-b-sample.")
@_run_options
@click.option("--out", required=True, help="Where to write the comparison JSON.")
@click.option("--people-out", help="Directory for people-level Parquet files (one per input file).")
@_value_labels_option
@_class_names_option
@_dictionary_option
@_guard
def compare(rules_path, model_path, model_b_path, rules_b_path, reference_rows, fit_rows_b, fit_b_sample, data,
            group_column, target, reference, n_boot, seed, workers, scheduler, batch_size, out, people_out,
            value_labels_path=None, class_names_text=None, dictionary_path=None):
    """Who keeps, loses or gains verified recourse when model A is replaced by model B, as JSON.

    Every file is counted apart (per group and change: verified under each model, A's advice holding under B;
    per rule of A: its rows and points under B) and the counts are added; the summary, the per-group bootstrap and
    the findings run from these counts. With the same rules, models, rows and --reference-rows (A's fit rows) the
    answer is compare_models' in memory.
    """
    import fsspec

    from ..compare import (COMPARED_ROWS, REFERENCE_ROWS, check_models, compare_from_counts, favourable_target,
                           fit_explainer_b)
    from ..distributed import (count_rows, expand_paths, iter_frames, load_rules, model_file, provenance,
                              reference_files, sample_rows)
    rules = _labelled_rules(_rules_text(rules_path), value_labels_path, class_names_text, dictionary_path)
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
        rules_b = _labelled_rules(_rules_text(rules_b_path), value_labels_path, class_names_text, dictionary_path)
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
        ex_b = fit_explainer_b(ex_a, X, ex_a.outputs(X, model=model_b), fit_on=fit_on,
                               remedy="fit model B's rules with other parameters and pass them with --rules-b")
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
