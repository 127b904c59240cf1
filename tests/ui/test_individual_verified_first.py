"""The Individual page speaks of the verified advice first: a person inside a rule the model rejects them in reads
the confirmed change (never 0 changes), and the rules' own statement only in the secondary line labelled "What the
rules alone say, not checked on the model"."""
import numpy as np

from tests.support import apptest_kit as kit


def test_a_person_inside_a_rule_the_model_rejects_reads_the_verified_change_first():
    from tcrex.ui.state import active, verification

    at = kit.new_app()
    result = kit.last_result(at)
    ws = active.data_and_model()
    rows = verification.verified_rows(ws, result)
    status = result.explanations["status"].astype(str).reindex(rows.frame.index).to_numpy()
    verified = (rows.frame["recourse"].astype(object) == "verified").to_numpy()
    inside = np.flatnonzero((status == "already_in_rule") & verified)
    assert len(inside), "the loans sample has people inside a rule the model rejects them in"
    row = rows.frame.index[inside[0]]
    n_changes = int(rows.frame.loc[row, "n_changes"])
    assert n_changes >= 1
    kit.goto(at, "individual")
    kit.show_row(at, int(ws.X.index.get_loc(row)))
    kit.assert_clean(at)
    heads = [s.value for s in at.success]
    assert any(f"({n_changes} change" in h for h in heads), heads
    captions = [c.value for c in at.caption]
    alone = [c for c in captions if c.startswith("What the rules alone say, not checked on the model:")]
    assert alone and "inside a rule the model does not confirm" in alone[0]
    assert not any("Already inside" in c for c in captions)
    assert not any("(0 changes)" in h for h in heads)
