"""The navigable metarule outline: structure, root open, advice groups, escaping, the individual's path, size."""
import re

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex import figures as F



@pytest.fixture(scope="module")
def big():
    rng = np.random.default_rng(0)
    n = 3000
    X = pd.DataFrame({f"x{i}": rng.uniform(0, 100, n) for i in range(4)})
    y = ((np.sin(X.x0 / 9) + np.cos(X.x1 / 7) + X.x2 / 60 - X.x3 / 80) > 0.6).astype(int).to_numpy()
    ex = TCREx(rho=0.01, tau=0.8, n_trees=2).fit(X, y_pred=y)  # 162 metarules on target 0
    return ex, X, y


def _walk(node):
    yield node
    for c in node.get("children", []):
        yield from _walk(c)


def test_outline_structure_matches_the_tree(fitted):
    ex = fitted[0]
    for t in range(len(ex.targets_)):
        o = F.metarule_outline(ex, t)
        leaves = [n for n in _walk(o["root"]) if n["kind"] == "leaf"]
        assert sorted(n["metarule"] for n in leaves) == list(range(len(ex.targets_[t].metarules)))
        assert o["root"]["condition"] is None and o["root"]["n_leaves"] == len(leaves)
        for n in _walk(o["root"]):
            if n["kind"] == "split":
                assert n["n_leaves"] == sum(c["n_leaves"] for c in n["children"])
                assert all(c["condition"].startswith(n["feature"]) for c in n["children"])


def test_root_is_open_and_branches_collapsed(fitted):
    html = F.metarule_tree_html(fitted[0], 0)
    opens = re.findall(r"<details( open)?>", html)
    assert opens[0] == " open"  # the root
    assert opens.count(" open") == 1 and len(opens) > 2
    assert "<script" not in html.replace("&lt;script", "")


def test_identical_advice_is_grouped(fitted):
    ex = fitted[0]
    o = F.metarule_outline(ex, 0)
    metas = ex.metarules_frame()
    metas = metas[metas.target == 0]
    assert sum(g["n_leaves"] for g in o["groups"]) == len(metas)
    assert len(o["groups"]) == metas["text"].nunique()
    repeated = [g for g in o["groups"] if g["n_leaves"] > 1]
    assert repeated, "this fixture has advice shared by several metarules"
    html = F.metarule_tree_html(ex, 0)
    for g in repeated:
        for m in g["metarules"]:
            leaf = re.search(rf'data-metarule="{m}"[^>]*>(.*?)</li>', html).group(1)
            assert f'title="advice group {g["group"]}"' in leaf and "same advice as" in leaf


def test_every_label_is_escaped(fitted):
    ex = fitted[0]
    html = F.metarule_tree_html(ex, 0, open_all=True)
    assert "<script>job" not in html
    assert "&lt;script&gt;job&lt;/script&gt;" in html


def test_individual_path_is_opened_and_marked(fitted):
    ex, X, y = fitted
    for t in range(len(ex.targets_)):
        from tcrex.figures._style import target_spec
        explained = ex.explain(X, y_pred=y, target=target_spec(ex.targets_[t]))
        for i in (0, 5, 17, 123):
            o = F.metarule_outline(ex, t, highlight_row=X.iloc[i])
            m = explained["metarule"].iloc[i]
            if not pd.isna(m):
                assert o["path_metarule"] == int(m)
            path = [n for n in _walk(o["root"]) if n["on_path"]]
            assert path[0] is o["root"] and path[-1]["kind"] == "leaf"
            assert path[-1]["metarule"] == o["path_metarule"]
    html = F.metarule_tree_html(ex, 0, highlight_row=X.iloc[5])
    o = F.metarule_outline(ex, 0, highlight_row=X.iloc[5])
    depth = sum(1 for n in _walk(o["root"]) if n["on_path"] and n["kind"] == "split")
    assert len(re.findall(r"<details open>", html)) == depth
    assert html.count("◀ this individual") >= 1
    assert re.search(rf'class="leaf path"[^>]*data-metarule="{o["path_metarule"]}"', html)
    assert o["path_of"] == "individual"
    leaf = F.metarule_outline(ex, 0, highlight_metarule=o["path_metarule"])
    assert leaf["path_of"] == "metarule" and leaf["path_metarule"] == o["path_metarule"]
    assert [n["on_path"] for n in _walk(leaf["root"])] == [n["on_path"] for n in _walk(o["root"])]
    assert F.metarule_outline(ex, 0)["path_of"] is None


def test_population_counts_in_the_outline(fitted):
    ex, X, y = fitted
    pop = ex.explain(X, y_pred=y)
    o = F.metarule_outline(ex, 0, population=pop)
    here = int(((pop["target"] == 0) & pop["metarule"].notna()).sum())
    assert o["root"]["here"] == here


def test_readable_and_bounded_at_100_plus_leaves(big):
    ex, X, y = big
    t = max(range(len(ex.targets_)), key=lambda t: len(ex.targets_[t].metarules))
    n = len(ex.targets_[t].metarules)
    assert n >= 100
    html = F.metarule_tree_html(ex, t, highlight_row=X.iloc[0])
    assert html.count("data-metarule=") == n
    assert len(html) < 1500 * n  # linear in the leaves, no layout blow-up
    assert len(re.findall(r"<details open>", html)) < 40  # only the root and one path open


@pytest.mark.slow  # a 100+ leaf tree: `make test`, not `make test-fast`
def test_leaf_budget_cuts_with_a_note_and_keeps_the_path(big):
    ex, X, y = big
    t = max(range(len(ex.targets_)), key=lambda t: len(ex.targets_[t].metarules))
    o = F.metarule_outline(ex, t, highlight_row=X.iloc[7], max_leaves=10)
    assert o["shown_leaves"] + o["hidden_leaves"] == o["n_metarules"]
    assert o["hidden_leaves"] > 0 and o["shown_leaves"] <= 10 + 40
    assert any(n["kind"] == "leaf" and n["on_path"] for n in _walk(o["root"]))
    html = F.metarule_tree_html(ex, t, max_leaves=10)
    assert "not shown" not in html and f"Showing {F.metarule_outline(ex, t, max_leaves=10)['shown_leaves']} of" in html
    # every top-level branch is visible: cut branches are drawn collapsed, with their condition and count
    plain = F.metarule_outline(ex, t, max_leaves=10)
    assert plain["root"]["kind"] == "split"
    for child in plain["root"]["children"]:
        assert child["kind"] in ("split", "leaf", "cut")
        assert f'{child["condition"]}' in html.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")
    cuts = [n for n in _walk(plain["root"]) if n["kind"] == "cut"]
    assert cuts and sum(c["n_leaves"] for c in cuts) == plain["hidden_leaves"]
    assert html.count(", collapsed)") == len(cuts)


def test_no_branch_is_hidden_at_any_budget(big):
    """However small the budget, both branches of every drawn split appear (as a subtree, a leaf or a collapsed
    count): the outline never hides a whole branch behind "N more not shown"."""
    ex, X, y = big
    t = max(range(len(ex.targets_)), key=lambda t: len(ex.targets_[t].metarules))
    for budget in (2, 5, 30, 400):
        o = F.metarule_outline(ex, t, max_leaves=budget)
        for n in _walk(o["root"]):
            if n["kind"] == "split":
                assert len(n["children"]) == 2
        assert o["shown_leaves"] <= 2 * budget
        assert o["shown_leaves"] + o["hidden_leaves"] == o["n_metarules"]


# ------------------------------------------------------------------------------------------------ the dashboard
@pytest.mark.slow  # runs the app in AppTest: `make test`, not `make test-fast`
def test_global_rules_page_shows_the_outline_and_zooms():
    from tests.support.apptest_kit import assert_clean, goto, new_app

    at = goto(new_app(), "global_rules")
    assert_clean(at)
    outline = [h for h in at.get("html") if "tcrex-outline" in h.proto.body]
    assert outline and "<details open>" in outline[0].proto.body
    assert "◀ this individual" not in outline[0].proto.body
    at.selectbox(key="tree_outline_zoom").set_value("individual").run()
    assert_clean(at)
    body = [h for h in at.get("html") if "tcrex-outline" in h.proto.body][0].proto.body
    assert "◀ this individual" in body and 'class="leaf path"' in body
    at.selectbox(key="tree_outline_zoom").set_value(0).run()
    body = [h for h in at.get("html") if "tcrex-outline" in h.proto.body][0].proto.body
    assert re.search(r'class="leaf path"[^>]*data-metarule="0"', body)
    # a leaf chosen in the selector is not an individual: it is marked as the zoomed leaf
    assert "◀ zoomed leaf" in body and "◀ this individual" not in body


def test_icicle_is_capped_at_a_node_budget(big):
    ex = big[0]
    t = max(range(len(ex.targets_)), key=lambda t: len(ex.targets_[t].metarules))
    full = F.metarule_icicle(ex, t, max_nodes=10_000)
    n_full = len(full.data[0].ids)
    assert n_full == 2 * len(ex.targets_[t].metarules) - 1
    capped = F.metarule_icicle(ex, t, max_nodes=60)
    assert len(capped.data[0].ids) <= 60 < n_full
    assert any("metarules below" in label for label in capped.data[0].labels)
    assert capped.data[0].values[0] == full.data[0].values[0]  # the same total coverage
