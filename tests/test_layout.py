"""The tests' own layout: every test directory a package, and shared help only in tests/support.

No module under tests/ imports a test module, a conftest or bench/: what tests share lives in
tests/support (the benchmarks import their corpus generators from there too). A handler a
test names for DSHKIT_HOOK_HANDLERS (`tests.….module:function`) exists: a stale name is only
a line in a hook log, and the test would go on with one handler fewer."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from .support.paths import REPO

TESTS = REPO / "tests"


def _sources() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "data" not in p.relative_to(TESTS).parts)


def _package(path: Path) -> str:
    return ".".join(path.relative_to(REPO).parent.parts)


def _imports(text: str, package: str) -> list[str]:
    """Every module `text` imports from within `package`, by absolute name; `from M import n`
    counts as both M and M.n (n may be a module)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            names += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return names


def _forbidden(module: str) -> bool:
    parts = module.split(".")
    if parts[0] in ("bench", "corpus", "corpus_multi"):
        return True
    return parts[0] == "tests" and any(p.startswith("test_") or p == "conftest" for p in parts)


def test_no_module_under_tests_imports_a_test_module_or_bench() -> None:
    offenders = [
        f"{path.relative_to(REPO)} imports {module}"
        for path in _sources()
        for module in _imports(path.read_text(), _package(path))
        if _forbidden(module)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "line",
    [
        "from .test_lifecycle import gone",
        "from ..hooks.test_run import hook",
        "from . import test_lifecycle",
        "from ..conftest import CLAUDE",
        "import tests.web.test_jobs",
        "from bench.corpus import Corpus",
        "from corpus import Corpus",
    ],
)
def test_each_spelling_of_such_an_import_is_seen(line: str) -> None:
    assert any(_forbidden(module) for module in _imports(line, "tests.graft"))


def test_support_imports_are_allowed() -> None:
    allowed = "from ..support.graft_driver import World\nfrom ..support import graft_driver\n"
    assert _imports(allowed, "tests.graft")[:2] == [
        "tests.support.graft_driver",
        "tests.support.graft_driver.World",
    ]
    assert not any(_forbidden(module) for module in _imports(allowed, "tests.graft"))


def test_every_test_directory_is_a_package() -> None:
    # pytest's default import mode names a test module by its package path: without an
    # __init__.py two tests/*/test_graft.py would be one module.
    directories = {path.parent for path in _sources()}
    lacking = [d for d in directories if not (d / "__init__.py").is_file()]
    assert sorted(str(d.relative_to(REPO)) for d in lacking) == []
    assert len(directories) > 10  # the walk found the tree


HANDLER = re.compile(r"\b(tests(?:\.\w+)+):(\w+)")


def test_every_handler_a_test_names_exists() -> None:
    named = {
        (match.group(1), match.group(2), str(path.relative_to(REPO)))
        for path in _sources()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for match in HANDLER.finditer(node.value)
    }
    missing = [
        f"{where}: {module}:{function}"
        for module, function, where in sorted(named)
        if not _callable(module, function)
    ]
    assert missing == [] and len(named) > 10


def _callable(module: str, function: str) -> bool:
    try:
        return callable(getattr(importlib.import_module(module), function, None))
    except ImportError:
        return False
