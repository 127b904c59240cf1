"""Build hook: the wheel carries the dashboard (app.py, pages/, assets/, the bundled sample, .streamlit/) inside the
package, as ``tcrex/_app/``, so ``pip install 'tcrex[app]'`` then ``tcrex ui`` works without a checkout.

The files stay where the repository layout puts them (app.py, pages/, assets/, sample_data/ at the top level); they
are copied at build time only. An editable install (``pip install -e .``, what ``make venv`` does) copies nothing:
``tcrex.resources.app_root`` then finds them in the checkout. Everything else is configured in pyproject.toml.
"""
from pathlib import Path
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Patterns (relative to the repository root) copied into tcrex/_app/ with the same relative paths; MANIFEST.in
# lists the same files so a wheel built from the sdist carries them too.
BUNDLED = ["app.py", "pages/README.md", "pages/views/*.py", "assets/*.svg", "assets/*.png",
           "sample_data/loans.csv", "sample_data/loans_model.json", "sample_data/loans_model.meta.json",
           "sample_data/loans_model_b.json", "sample_data/loans_model_b.meta.json",  # docs/compare.md's model B
           "sample_data/README.md", "sample_data/loans_codebook.csv", ".streamlit/config.toml"]


class BuildWithApp(build_py):
    """``build_py`` plus the dashboard's files under ``tcrex/_app/`` of the build."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the checkout is the app root
        target = Path(self.build_lib) / "tcrex" / "_app"
        copied = 0
        for pattern in BUNDLED:
            matches = sorted(ROOT.glob(pattern))
            if not matches:
                raise SystemExit(f"setup.py: nothing matches {pattern!r}; the wheel would lack part of the dashboard")
            for src in matches:
                dest = target / src.relative_to(ROOT)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
                copied += 1
        print(f"setup.py: {copied} dashboard files bundled in tcrex/_app/")


setup(cmdclass={"build_py": BuildWithApp})
