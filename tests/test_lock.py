"""requirements.lock pins every requirement of requirements.txt to a version that requirement allows."""
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _lines(name: str) -> list[str]:
    return [s for line in (ROOT / name).read_text().splitlines() if (s := line.split("#", 1)[0].strip())]


def test_every_requirement_is_pinned_within_its_bounds():
    pins = {}
    for line in _lines("requirements.lock"):
        name, _, version = line.partition("==")
        assert version and "," not in version and ";" not in version, f"not a pin: {line!r}"
        pins[canonicalize_name(name)] = Version(version)
    assert "tcrex" not in pins  # the project itself is installed from the checkout
    for line in _lines("requirements.txt"):
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), (str(req), str(pins[name]))
