"""Shared checks: two audits (or their mergeable counts) hold the same numbers."""
import json

import pandas as pd


def assert_counts_equal(a, b):
    """Two AuditCounts hold the same numbers (cells, distance bins, per-feature change/keep counts)."""
    pd.testing.assert_frame_equal(a.cells.reset_index(drop=True), b.cells.reset_index(drop=True),
                                  check_dtype=False)
    pd.testing.assert_frame_equal(a.distances.reset_index(drop=True), b.distances.reset_index(drop=True),
                                  check_dtype=False)
    for x, y in ((a.change, b.change), (a.keep, b.keep)):
        pd.testing.assert_frame_equal(x.sort_index(), y.sort_index(), check_dtype=False)
    assert (a.features, a.target, a.distance_available, a.effectiveness_available) == \
        (b.features, b.target, b.distance_available, b.effectiveness_available)


def assert_same_audit(got, want):
    for name in ("table", "gaps", "metric_intervals", "feature_change_shares", "changes_distribution"):
        pd.testing.assert_frame_equal(getattr(got, name)(), getattr(want, name)())
    pd.testing.assert_frame_equal(got.top_rules(k=100), want.top_rules(k=100))
    assert got.findings() == want.findings()
    assert json.dumps(got.to_dict(), allow_nan=False) == json.dumps(want.to_dict(), allow_nan=False)
