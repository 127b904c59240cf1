"""Every ```python block of README.md and docs/*.md runs as written.

The blocks of one page run in order in one namespace, as a reader goes down the page. The namespace starts with
what the pages call the reader's own data and models, taken from the bundled loans sample (:func:`namespace`):
``X`` and its slices (``X_train``, ``X_test``, ...), ``model`` (the bundled XGBoost classifier), ``model_b`` (the
bundled model B), ``y_pred``, one row ``x`` and ``ex``, an explainer of ``model`` on ``X``. Nothing else is provided: a block that uses a name must import or
define it, or one block above it on the same page must.

A block that cannot run here (a function signature, a cloud bucket, a Spark session) is preceded by the line
``<!-- snippet: skip (why) -->``; the reason is required, and skips are kept rare (:data:`MAX_SKIPS`).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```", re.S | re.M)
SKIP = re.compile(r"<!-- snippet: skip \((?P<why>[^)]+)\) -->\s*$")
#: At most this many blocks, over all pages, may be skipped.
MAX_SKIPS = 6


def blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """(line, code, skip reason or None) of every ```python block of ``page``."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in BLOCK.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        out.append((text.count("\n", 0, m.start()) + 1, m.group(1), skip.group("why") if skip else None))
    return out


@pytest.fixture(scope="module")
def reader_data():
    """The names the pages use for the reader's own data and models, from the bundled sample."""
    from tcrex import datasets
    frame = datasets.load_bundled_loans()
    y = frame.pop(datasets.LOANS_TARGET)
    X = frame.iloc[:800]
    model = datasets.load_bundled_model()
    model_b = datasets.load_bundled_model(datasets.SAMPLE_DATA_DIR / datasets.LOANS_MODEL_B)
    rows = frame.iloc[800:1000]
    from tcrex import TCREx
    ex = TCREx(rho=0.02, tau=0.9).fit(X, model)  # "ex": the reader's explainer, on pages that start from one
    return {"ex": ex, "X": X, "X_train": X, "X_fit": X, "y_train": y.iloc[:800], "X_test": rows, "X_new": rows,
            "X_people": rows, "x": rows.iloc[0], "model": model, "model_a": model, "m": model, "model_b": model_b,
            "y_pred": model.predict(X), "y_test_pred": model.predict(rows)}


def test_every_page_has_its_blocks_found_and_skips_are_rare_and_explained():
    found = {p.name: blocks(p) for p in PAGES}
    assert sum(len(b) for b in found.values()) >= 10  # the pattern finds the blocks
    skipped = [(page, line, why) for page, bs in found.items() for line, _, why in bs if why is not None]
    assert len(skipped) <= MAX_SKIPS, skipped
    assert all(len(why.split()) >= 2 for _, _, why in skipped), skipped  # a reason, not a bare marker


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_page_snippets_run_as_written(page, reader_data, tmp_path, monkeypatch):
    import plotly.io as pio
    from plotly.io.base_renderers import ExternalRenderer

    class ToFile(ExternalRenderer):
        """fig.show() writes the figure's JSON here instead of opening a browser tab (no IPython either)."""

        def render(self, fig_dict):
            shown = len(list(tmp_path.glob("shown-*.json")))
            (tmp_path / f"shown-{shown}.json").write_text(pio.to_json(fig_dict), encoding="utf-8")

    pio.renderers["snippet_file"] = ToFile()
    monkeypatch.setattr(pio.renderers, "default", "snippet_file")
    monkeypatch.chdir(tmp_path)  # files a snippet writes land here
    namespace = {"__name__": f"snippets_of_{page.stem}", **reader_data}
    for line, code, why in blocks(page):
        if why is not None:
            continue
        try:
            exec(compile(code, f"{page.name}:{line}", "exec"), namespace)  # noqa: S102 - the docs' own code
        except Exception as exc:  # noqa: BLE001 - the page and line of the block that fails, then the error
            pytest.fail(f"{page.relative_to(ROOT)} line {line}: {type(exc).__name__}: {exc}")
