"""Model comparison (``tcrex.compare.compare_counts``) of Parquet/CSV files batch by batch, for ``tcrex compare``.

Both explainers travel as JSON and both models as file paths, as for the audit: each worker rebuilds them once and
counts its own rows; the counts add up on the driver. People-level results go to one Parquet file per input file,
rows in input order.
"""
from __future__ import annotations

import contextlib
import json

import pandas as pd

from ..outputs import atomic_output

from ._stream import _require_columns, iter_frames, load_reference, load_rules, model_file, provenance, reference_files


def compare_frame(ex_a, ex_b, df: pd.DataFrame, *, model_a, model_b, groups=None, target=None,
                  explainer_b_fit_on=None, people=False, reference=None, group_labels=None):
    """The comparison counts of the rows of ``df`` (features and, with ``groups``, the grouping column), and their
    people frame when ``people`` is true; ``reference``: the reference rows (``compare_counts(reference_rows=)``).
    Groups are named by the codebook's labels, as in the audit (``group_labels``: :func:`tcrex.audit.named_groups`)."""
    from ..population import named_groups
    from ..compare import GIVEN, compare_counts
    names = list(ex_a.schema_.names)
    _require_columns(df, names + ([groups] if groups else []))
    counts, frame = compare_counts(ex_a, df, model_b, explainer_b=ex_b, model_a=model_a, target=target,
                                   groups=named_groups(ex_a, df, groups, group_labels),
                                   explainer_b_fit_on=explainer_b_fit_on or GIVEN,
                                   return_people=True, reference_rows=reference)
    return counts, (frame if people else None)


def compare_file(rules_a: str, rules_b: str, src: str, *, model_a_path: str, model_b_path: str, groups=None,
                 target=None, explainer_b_fit_on=None, people_dst: str | None = None, batch_size: int = 262_144,
                 reference_rows: str | None = None, model_a_digest: dict | None = None,
                 model_b_digest: dict | None = None, reference_digests: list[dict] | None = None,
                 group_labels: dict | None = None, progress: bool = False):
    """The comparison counts of one Parquet or CSV file, batch by batch (they add up); with ``people_dst`` the
    people-level frame is written there as Parquet (rows in input order, a ``row`` column numbering them; its
    key-value metadata ``tcrex`` names the digests of both rules, both model files and the reference rows,
    :func:`provenance`). ``reference_rows``: file(s) of the rows explainer A was fitted on (:func:`load_reference`,
    kept per content), for both searches beyond the rules, the distances and the re-check of A's rules.
    ``model_a_digest``, ``model_b_digest``, ``reference_digests``: the contents the run started with (a replaced
    file is refused). ``progress``: a stderr line per batch (:class:`tcrex.distributed.BatchProgress`)."""
    from ._progress import BatchProgress, known_rows
    import pyarrow.parquet as pq

    ex_a, ex_b = load_rules(rules_a), load_rules(rules_b)
    model_a, model_a_digest = model_file(model_a_path, None, model_a_digest)
    model_b, model_b_digest = model_file(model_b_path, None, model_b_digest)
    names = list(ex_a.schema_.names)
    if reference_rows:
        reference_digests = reference_digests or reference_files(reference_rows)
        reference = load_reference(reference_rows, tuple(names), reference_digests)
    else:
        reference, reference_digests = None, None
    used = {b"tcrex": json.dumps({"a": provenance(rules_a, model_a_path, model_a_digest, reference_digests),
                                  "b": provenance(rules_b, model_b_path, model_b_digest, reference_digests)}).encode()}
    cols = list(dict.fromkeys(names + ([groups] if groups else [])))
    total, writer, offset = None, None, 0
    counter = BatchProgress("compared", src, known_rows(src) if progress else None, enabled=progress)
    with contextlib.ExitStack() as stack:  # the people file appears complete or not at all
        fout = stack.enter_context(atomic_output(people_dst, "wb")) if people_dst else None
        for df in iter_frames(src, batch_size=batch_size, columns=cols):
            c, people = compare_frame(ex_a, ex_b, df, model_a=model_a, model_b=model_b, groups=groups, target=target,
                                      explainer_b_fit_on=explainer_b_fit_on, people=people_dst is not None,
                                      reference=reference, group_labels=group_labels)
            total = c if total is None else total + c
            if fout is not None:
                table = _people_table(people, offset)
                writer = writer or pq.ParquetWriter(fout, table.schema.with_metadata({**(table.schema.metadata
                                                                                          or {}), **used}))
                writer.write_table(table.cast(writer.schema))
            offset += len(df)
            counter.step(len(df))
        if total is None:  # no rows: the counts of an empty frame
            total, people = compare_frame(ex_a, ex_b, pd.DataFrame({c: [] for c in cols}), model_a=model_a,
                                          model_b=model_b, groups=groups, target=target,
                                          explainer_b_fit_on=explainer_b_fit_on, people=fout is not None,
                                          reference=reference, group_labels=group_labels)
            if fout is not None:
                table = _people_table(people, 0)
                writer = pq.ParquetWriter(fout, table.schema.with_metadata({**(table.schema.metadata or {}),
                                                                            **used}))
        if writer is not None:
            writer.close()
    return total


def _people_table(people: pd.DataFrame, offset: int):
    import pyarrow as pa
    frame = people.reset_index(drop=True)
    frame.insert(0, "row", pd.RangeIndex(offset, offset + len(frame)))
    if "group" in frame:
        frame["group"] = frame["group"].astype(str)
    for c in ("output_a", "output_b"):  # outputs of one model share a type; text when they mix
        vals = [v.item() if hasattr(v, "item") and not isinstance(v, str) else v for v in frame[c].tolist()]
        if not all(isinstance(v, (int, float, bool)) for v in vals) and vals:
            frame[c] = [str(v) for v in vals]
        else:
            frame[c] = pd.Series(vals, dtype=None if vals else "float64")
    return pa.Table.from_pandas(frame, preserve_index=False)
