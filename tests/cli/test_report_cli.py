"""tcrex report: clear messages for inputs it cannot use, the report with its sentence from files on a table shaped
unlike the sample (the credit-card table with an XGBoost JSON model), and --pdf printed by Debian's Chromium with
the main part on at most 4 A4 pages."""
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.cli._report import print_pdf
from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans, load_bundled_model

from tests.support.voice_cases import credit_card_case

pytestmark = pytest.mark.slow  # explains, verifies and writes whole reports

MODEL, MODEL_B = str(SAMPLE_DATA_DIR / LOANS_MODEL), str(SAMPLE_DATA_DIR / LOANS_MODEL_B)
MAIN_PAGES = 4


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def loans_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    frame = load_bundled_loans().head(900)
    frame.to_csv(d / "people.csv", index=False)
    frame.head(600).to_csv(d / "fit.csv", index=False)
    X = frame.head(600).drop(columns=["approved"])
    (d / "rules.json").write_text(TCREx(target=1, class_names={0: "rejected", 1: "approved"})
                                  .fit(X, load_bundled_model()).to_json())
    return d


def test_inputs_it_cannot_use_are_said_not_tracebacks(loans_files, tmp_path):
    d = loans_files
    base = ["report", "--rules", d / "rules.json", "--model", MODEL, "--reference-rows", d / "fit.csv",
            "--out", tmp_path / "r.html"]
    res = _run(*base, "--data", d / "people.csv", "--audit-by", "no_such_column")
    assert res.exit_code == 2 and "--audit-by 'no_such_column' is not a column" in res.output
    load_bundled_loans().head(50).drop(columns=["income"]).to_csv(tmp_path / "short.csv", index=False)
    res = _run(*base, "--data", tmp_path / "short.csv")
    assert res.exit_code == 2 and "lacks column(s) income" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "r.html").exists()


def test_the_report_with_audit_and_comparison_names_its_sentence(loans_files, tmp_path):
    d = loans_files
    res = _run("report", "--rules", d / "rules.json", "--model", MODEL, "--data", d / "people.csv",
               "--reference-rows", d / "fit.csv", "--audit-by", "employment", "--model-b", MODEL_B,
               "--out", tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r.html").read_text()
    sentence = re.search(r'<p id="summary"[^>]*>(.*?)</p>', text).group(1)
    assert sentence.startswith("Of 900 people") and "need a change to reach approved" in sentence
    assert sentence in res.output
    for section in ("executive-summary", "who-gets-recourse", "how-hard", "groups-differ", "models-changed"):
        assert f'<section id="{section}"' in text


def test_a_table_shaped_unlike_the_sample(tmp_path):
    X, model = credit_card_case(1500)
    X.to_csv(tmp_path / "cards.csv", index=False)
    model.get_booster().save_model(str(tmp_path / "m.json"))
    ex = TCREx(target=0, class_names={0: "no default", 1: "default"}).fit(X, model)
    (tmp_path / "rules.json").write_text(ex.to_json())
    res = _run("report", "--rules", tmp_path / "rules.json", "--model", tmp_path / "m.json", "--data",
               tmp_path / "cards.csv", "--reference-rows", tmp_path / "cards.csv", "--out", tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    sentence = re.search(r'<p id="summary"[^>]*>(.*?)</p>', (tmp_path / "r.html").read_text()).group(1)
    assert "need a change to reach no default" in sentence and "status_1" in sentence


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium (make browser)")
def test_pdf_is_printed_and_the_main_part_fits_four_pages(loans_files, tmp_path):
    d = loans_files
    res = _run("report", "--rules", d / "rules.json", "--model", MODEL, "--data", d / "people.csv",
               "--reference-rows", d / "fit.csv", "--audit-by", "employment", "--model-b", MODEL_B,
               "--out", tmp_path / "r.html", "--pdf", tmp_path / "r.pdf")
    assert res.exit_code == 0, res.output
    pdf = (tmp_path / "r.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and _pages(pdf) > MAIN_PAGES  # the appendix prints on its own pages
    text = (tmp_path / "r.html").read_text()
    start, end = text.index('<details class="appendix"'), text.index("<footer")
    (tmp_path / "main.html").write_text(text[:start] + text[end:])
    print_pdf(str(tmp_path / "main.html"), str(tmp_path / "main.pdf"))
    assert 1 <= _pages((tmp_path / "main.pdf").read_bytes()) <= MAIN_PAGES


def _pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


def test_without_chromium_pdf_is_refused_with_what_to_install(loans_files, tmp_path, monkeypatch):
    monkeypatch.setenv("TCREX_CHROMIUM", "no-such-chromium-program")
    assert shutil.which("no-such-chromium-program") is None
    d = loans_files
    res = _run("report", "--rules", d / "rules.json", "--model", MODEL, "--data", d / "people.csv",
               "--reference-rows", d / "fit.csv", "--out", tmp_path / "r.html", "--pdf", tmp_path / "r.pdf")
    assert res.exit_code == 2 and "printing the report to PDF needs Chromium" in res.output
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "r.html").exists()  # said before any work
