"""The documentation as the tests read it: the README and the pages of docs/."""

from __future__ import annotations

from tests.conftest import REPO

DOCS = REPO / "docs"


def page(name: str) -> str:
    """One page of docs/ (`redaction.md`, `integrations/verl.md`)."""
    return (DOCS / name).read_text()


def everything() -> str:
    """The README and every page, one after the other."""
    pages = sorted(DOCS.rglob("*.md"))
    return "\n".join([(REPO / "README.md").read_text(), *(path.read_text() for path in pages)])
