"""The delivery gate's test pages judged once per module: a module-scoped screenshot directory
(`shots`) and fixtures that judge a set of pages with one browser (`judged`), named as the
module names them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from dshkit.gate.delivery import content_hash
from dshkit.gate.judge import Verdict, judge_files
from dshkit.gate.verdicts import save_verdict
from dshkit.store import Store

from .paths import PAGES


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a module's verdicts write their screenshots."""
    return tmp_path_factory.mktemp("shots")


def judge_pages(names: Iterable[str], budget: float, shots: Path) -> dict[str, Verdict]:
    """Each page of tests/data/gate judged within `budget`, by its file name."""
    files = [PAGES / name for name in names]
    return {Path(v.path).name: v for v in judge_files(files, budget, shots)}


def judged(name: str, pages: Iterable[str], budget: float) -> Callable[..., dict[str, Verdict]]:
    """A module-scoped fixture called `name`: `pages` judged within `budget` (the module
    imports `shots` beside it)."""
    names = tuple(pages)

    @pytest.fixture(scope="module", name=name)
    def fixture(shots: Path) -> dict[str, Verdict]:
        return judge_pages(names, budget, shots)

    return fixture


def stored_verdict(state: Path, page: Path, verdict: str) -> None:
    """A verdict of `page` as its content is now, stored in `state`'s store as the judge
    stores it (no browser: what the gate reads of a verdict, not how it was reached)."""
    measured = Verdict(str(page), content_hash(page), verdict, False, 5, None, [], [], None)
    with Store(state) as store:
        save_verdict(store, measured)


def kinds(verdict: Verdict, kind: str) -> list[dict[str, object]]:
    """The verdict's findings of one kind, in time order."""
    return [f for f in verdict.findings if f["kind"] == kind]


def own_pixels(canvas: dict[str, object]) -> dict[str, object]:
    """What a canvas's own buffer read as: blank, its brightest and mean luminance and alpha
    (the fields every blank-canvas test compares; the rest are the dim-texture rule's)."""
    own = canvas["ownPixels"]
    assert isinstance(own, dict)
    return {key: own[key] for key in ("blank", "max", "mean", "alpha")}
