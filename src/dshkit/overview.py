"""What dshkit knows and what is missing, at a glance: the console's first view.

Cheap facts only (no probe, no network): the sessions read per harness, whether the LLM is
configured (never the key: only whether there is one) with the next step when it is not,
whether the hooks are installed per harness (user scope, as `doctor` inspects it: each
harness's settings where its environment says, e.g. under $HOME or $CLAUDE_CONFIG_DIR), and
the profile's state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import harnesses
from .install import inspect
from .llm import LLMConfig, LLMConfigError
from .profile.state import ProfileState
from .sessions.catalog import Catalog
from .store import Store


def overview(state_dir: Path, project: Path) -> dict[str, Any]:
    """The facts above for the state directory `state_dir`, the hooks' install per harness in
    user scope (what a console can speak for)."""
    with Store(state_dir) as store:
        catalog = Catalog(store)
        sessions = {name: 0 for name in harnesses.NAMES}
        humans = 0
        for info in catalog.recent(None, None):
            sessions[info.harness] = sessions.get(info.harness, 0) + 1
            humans += info.human_messages
        profile = ProfileState(store)
        latest = profile.latest()
        mode = profile.mode.value
    return {
        "stateDir": str(state_dir),
        "harnesses": list(harnesses.NAMES),
        "sessions": sessions,
        "humanMessages": humans,
        "llm": _llm(state_dir),
        "hooks": [_hooks(h.name, project, state_dir) for h in harnesses.all_harnesses()],
        "profile": {"mode": mode, "version": latest[0] if latest else None},
    }


def _llm(state_dir: Path) -> dict[str, Any]:
    try:
        config = LLMConfig.load(state_dir)
        config.check()
    except LLMConfigError as exc:  # the message names a key only by its length
        return {
            "configured": False,
            "problem": str(exc),
            "nextStep": f"set DSHKIT_LLM_API_KEY for `dshkit serve`, or put api_key under [llm] "
            f"in {state_dir / 'config.toml'}, then restart the service",
        }
    return {"configured": True, "model": config.model, "baseUrl": config.base_url}


def _hooks(harness: str, project: Path, state_dir: Path) -> dict[str, Any]:
    found = inspect(harness, "user", project, state_dir)
    return {
        "harness": harness,
        "installed": found.installed,
        "status": found.status,
        "problems": [problem.message for problem in found.problems],
        "nextStep": None
        if found.installed and not found.problems
        else f"dshkit install-hooks --harness {harness}",
    }


class StatusService:
    """The overview for the web API; each call opens its own store connection."""

    def __init__(self, state_dir: Path, project: Path | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.project = project or Path.cwd()

    def overview(self) -> dict[str, Any]:
        return overview(self.state_dir, self.project)
