"""The pages at real size with an uploaded multi-feature table (a credit-bureau-like CSV of 23 features, made in
the test), not only the bundled sample: Overview, Global rules, Rule map, Individual and the report are drawn,
screenshotted, and nothing is wider than a 1280 px window (no table or chart scrolls sideways, no text is cut)."""
from __future__ import annotations

import pytest

from tests.support.credit_like import credit_like

from tests.support.browser import (APP_TIMEOUT_MS, SCREENSHOTS, assert_no_errors, download_report, frame_of, go_to,
                                   open_tab, set_toggle, sidebar_text, upload_table, wait_for_app_idle,
                                   wait_for_layout)

WIDTH, HEIGHT = 1280, 1440
PAGE_CHARTS = {
    "Overview": '[data-testid="stPlotlyChart"] .main-svg',
    "Global rules": ".tcrex-outline details",
    "Rule map (2-D)": '[data-testid="stPlotlyChart"] .main-svg',
    "Individual": '[data-testid="stDataFrame"]',
}
# what overflows sideways: the page itself, and every data grid's scroller (a grid too wide for its box scrolls)
OVERFLOW_JS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const out = {page: Math.max(document.documentElement.scrollWidth, main ? main.scrollWidth : 0), grids: [],
                 charts: []};
    document.querySelectorAll('[data-testid="stDataFrame"]').forEach(el => {
        const s = el.querySelector('.dvn-scroller');
        if (s) out.grids.push({scroll: s.scrollWidth, client: s.clientWidth,
                               right: Math.round(el.getBoundingClientRect().right)});
    });
    document.querySelectorAll('[data-testid="stTable"]').forEach(el => {
        const s = el.querySelector('table');
        out.grids.push({scroll: Math.max(el.scrollWidth, s ? Math.round(s.getBoundingClientRect().width) : 0),
                        client: el.clientWidth, right: Math.round(el.getBoundingClientRect().right)});
    });
    document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach(el => {
        out.charts.push({right: Math.round(el.getBoundingClientRect().right)});
    });
    return out;
}"""


@pytest.fixture
def credit_page(browser, streamlit_server, tmp_path):
    csv = tmp_path / "credit_bureau.csv"
    credit_like(3000, seed=2).to_csv(csv, index=False)
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(APP_TIMEOUT_MS)
    page.tcrex_errors = []
    page.on("pageerror", lambda exc: page.tcrex_errors.append(str(exc)))
    page.goto(streamlit_server + "/data_model", wait_until="domcontentloaded")
    wait_for_app_idle(page)
    upload_table(page, csv, "3,000")
    page.get_by_text("trained in the app").first.wait_for()
    yield page
    context.close()


def _open(page, label: str) -> None:
    go_to(page, label)
    page.locator(PAGE_CHARTS[label]).first.wait_for(state="visible")
    wait_for_app_idle(page)
    wait_for_layout(page)  # grids and charts size themselves after they appear


def _shot(page, name: str):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    # Streamlit scrolls inside its main container: grow the window to the content for a whole-page picture
    height = page.evaluate("""() => Math.max(document.documentElement.scrollHeight, ...['stMain',
        'stAppViewContainer', 'stMainBlockContainer'].map(id => document.querySelector(`[data-testid="${id}"]`))
        .filter(el => el !== null).map(el => el.scrollHeight))""")
    page.set_viewport_size({"width": WIDTH, "height": int(min(max(height + 40, HEIGHT), 9000))})
    wait_for_layout(page)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    return path


def test_uploaded_credit_table_pages_fit_1280_px(credit_page):
    page = credit_page
    assert "23 features" in sidebar_text(page)
    for label in PAGE_CHARTS:
        _open(page, label)
        assert_no_errors(page)
        widths = page.evaluate(OVERFLOW_JS)
        name = "uploaded-" + label.split(" ")[0].lower()
        _shot(page, name)
        assert widths["page"] <= WIDTH, (label, widths)
        for grid in widths["grids"]:  # no table needs a sideways scroll, none runs off the window
            assert grid["scroll"] <= grid["client"] + 2 and grid["right"] <= WIDTH, (label, widths)
        for chart in widths["charts"]:
            assert chart["right"] <= WIDTH, (label, widths)
    # the Individual page: the side-by-side table has every feature of the person
    assert page.get_by_text("Side by side").count() >= 1


def test_full_diagram_opens_centred_on_the_root(credit_page):
    """The full-size metarule diagram is wider than its frame; it opens scrolled so that the root is in view (it
    used to open at the left edge with the root off-screen)."""
    page = credit_page
    _open(page, "Global rules")
    open_tab(page, "Diagram")
    # on by default for a tree of more than 12 metarules; set it either way (a click on an "on" toggle turns it off)
    set_toggle(page, "Full size (scroll to pan)")
    open_tab(page, "Diagram")  # still the selected tab after the toggle's rerun
    # other tabs keep their own (hidden) frames: only the frame in the shown panel counts
    shown = page.locator('[data-testid="stTabPanel"]:visible iframe')
    shown.first.wait_for(state="visible")  # drawn by the toggle's run, if it was off: that run is over when idle
    wait_for_app_idle(page)
    frame = frame_of(shown)
    frame.wait_for_function("() => document.getElementById('t') !== null && document.getElementById('t').complete")
    wait_for_layout(frame)
    view = frame.evaluate("""() => { const f = document.getElementById('f'), t = document.getElementById('t');
        return {left: f.scrollLeft, width: f.clientWidth, content: t.getBoundingClientRect().width,
                root: Number(f.dataset.rootX)}; }""")
    _shot(page, "uploaded-diagram")
    assert view["content"] > view["width"], view  # a real full-size tree, wider than its frame
    assert view["left"] > 0 and view["left"] <= view["root"] <= view["left"] + view["width"], view
    assert abs(view["root"] - (view["left"] + view["width"] / 2)) < view["width"] / 4, view  # about centred


def test_uploaded_credit_report_fits_the_page(credit_page, tmp_path):
    page = credit_page
    go_to(page, "Export")
    path = download_report(page, tmp_path)
    html = path.read_text(encoding="utf-8")
    for raw in ("target_description", "n_served", "boundary_effectiveness"):
        assert raw not in html, raw
    report = page.context.new_page()
    report.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    report.goto(path.as_uri())
    height = report.evaluate("document.documentElement.scrollHeight")
    widest = report.evaluate("Math.max(...Array.from(document.querySelectorAll('table')).map(t => "
                             "t.getBoundingClientRect().width))")
    doc_width = report.evaluate("document.documentElement.scrollWidth")
    _shot(report, "uploaded-report")
    report.close()
    assert height <= 15 * HEIGHT and widest <= WIDTH and doc_width <= WIDTH, (height, widest, doc_width)
