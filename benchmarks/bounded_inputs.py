"""Codebook matching and row-group-heavy Parquet: the current code against the way it was done before, in one
process (figures are ratios; absolute seconds depend on the load, printed beside them).

* matching a codebook of ``--values`` values to a categorical feature of ``--categories`` categories
  (:func:`tcrex.codebook.match_feature`) against a scan of the categories per label (what it did before);
* reading a Parquet file of ``--groups`` one-row row groups (:func:`tcrex.intake.read_table`) against reading it
  row group by row group (what it did before), and against the same rows as one row group.

Run: ``PYTHONPATH=. python benchmarks/bounded_inputs.py [--values 100000 --categories 3000 --groups 50000]``.
"""
from __future__ import annotations

import argparse
import io
import os
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tcrex.codebook import match_feature
from tcrex.intake import read_table


def _scan_per_label(categories, labels):
    """The matcher before: for each label, a scan of the categories for one equal to it, then its text."""
    by_text = {str(c): c for c in categories}
    matched = {}
    for key, label in labels.items():
        cat = next((c for c in categories if not isinstance(c, str) and c == key), None)
        if cat is None:
            cat = by_text.get(str(key))
        if cat is not None:
            matched[cat] = label
    return matched


def _per_group(data):
    pf = pq.ParquetFile(io.BytesIO(data))
    return pa.concat_tables([pf.read_row_group(i) for i in range(pf.metadata.num_row_groups)]).to_pandas()


def _timed(fn, *a):
    t0 = time.perf_counter()
    out = fn(*a)
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", type=int, default=100_000)
    ap.add_argument("--categories", type=int, default=3_000)
    ap.add_argument("--groups", type=int, default=50_000)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")

    categories = [float(i) for i in range(args.categories)]  # numeric categories: the scan compares each
    labels = {str(i): f"label {i}" for i in range(args.values)}
    new_s, new = _timed(match_feature, "f", True, categories, labels)
    old_s, old = _timed(_scan_per_label, categories, labels)
    print(f"codebook {args.values:,} values x {args.categories:,} categories: {new_s:.3f} s now ({len(new[0]):,} "
          f"matched: '7' finds 7.0), {old_s:.2f} s scanning per label ({len(old):,} matched) "
          f"({old_s / max(new_s, 1e-9):.0f}x)")

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 97, args.groups), "b": rng.normal(size=args.groups),
                          "c": rng.choice(["x", "y"], args.groups)})
    buf, one = io.BytesIO(), io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buf, row_group_size=1)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), one)
    data = buf.getvalue()
    new_s, got = _timed(read_table, data, "tiny.parquet")
    old_s, _ = _timed(_per_group, data)
    one_s, _ = _timed(read_table, one.getvalue(), "one.parquet")
    assert len(got.frame) == args.groups
    print(f"Parquet of {args.groups:,} one-row groups ({len(data) / 2**20:.1f} MB): read_table {new_s:.2f} s; "
          f"the row-group reads alone, one call per group: {old_s:.2f} s; the same rows as one group: {one_s:.2f} s "
          f"(read_table {new_s / max(one_s, 1e-9):.1f}x the one-group read)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
