"""`lazy.lazy_names`, the one `__getattr__`/`__dir__` of the package faces: every name a face
lists is there, from the module it lives in, loaded only when asked for; anything else is an
AttributeError; the helper itself loads nothing (faces sit on the hook path)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

from dshkit import chromium
from dshkit.capability import probes
from dshkit.lazy import lazy_names

from .support.paths import PYTHONPATH

FACES = (
    "capability",
    "gate",
    "graft",
    "inject",
    "llm",
    "memory",
    "optimizer",
    "profile",
    "sessions",
)


@pytest.mark.parametrize("name", FACES)
def test_every_name_of_a_face_is_there_and_listed(name: str) -> None:
    face = importlib.import_module(f"dshkit.{name}")
    for exported in face.__all__:
        assert getattr(face, exported) is not None, exported
        assert exported in vars(face)  # kept: the next lookup is a plain one
    assert set(face.__all__) <= set(dir(face))
    with pytest.raises(AttributeError, match=f"module 'dshkit.{name}' has no attribute 'nope'"):
        face.nope  # noqa: B018


def test_a_name_spelled_otherwise_in_another_package() -> None:
    assert probes.BROWSERS == chromium.NAMES
    assert probes.BROWSER_ENV == chromium.EXECUTABLE_ENV
    assert {"BROWSERS", "BROWSER_ENV"} <= set(dir(probes))


def test_a_name_is_loaded_only_when_asked_for() -> None:
    module = types.ModuleType("dshkit.graft.face_under_test")
    module.__package__ = "dshkit.graft"
    getattr_, dir_ = lazy_names(vars(module), {"Decision": "watermark", "NAME": ".marker"})
    assert "Decision" not in vars(module) and "Decision" in dir_()
    from dshkit.graft.watermark import Decision

    assert getattr_("Decision") is Decision and vars(module)["Decision"] is Decision
    assert getattr_("NAME") == "graft.used"
    with pytest.raises(AttributeError):
        getattr_("__path__")  # (the import system asks: a module, not a package)


@pytest.mark.process
def test_the_helper_loads_nothing_more() -> None:
    probe = (
        "import sys; import dshkit; before = set(sys.modules)\n"
        "import dshkit.lazy\n"
        "print(sorted(set(sys.modules) - before))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout.strip() in ("['dshkit.lazy']", "['__future__', 'dshkit.lazy']")
