"""The descriptors (`dshkit.plugins`): one per package with a service, each reference real, and
no other module of `src/dshkit` listing capabilities.

A capability was once added by editing a dozen central tables; those are now derived from the
descriptors. What keeps a new table from growing back is a look at the source itself, three
ways: a string naming a descriptor's entry point ("dshkit.memory.hook:on_stop", or
"memory:memory" as the CLI's table had it), a module-level collection holding two or more
descriptors' names or tools they approve (a table keyed by capability), a module importing the
surface modules of two or more other descriptors (a table of their functions). Only the
config's schema is let through, with why. Run on the tree before the descriptors, it names
every old table.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from dshkit import hookspec, plugins
from dshkit.app import App
from dshkit.graft import marker
from dshkit.store import Store

from .support.paths import REPO

SRC = REPO / "src"
PACKAGE = SRC / "dshkit"

# Module-level collections that may hold several descriptors' names, and why.
ALLOWED_TABLES = {
    # config.toml's schema: one section per capability with settings, the file's one checked
    # place (a capability with settings adds its section there).
    ("dshkit.config", "SECTIONS"),
}


# -- what the descriptors hold ---------------------------------------------------------------


def references(plugin: plugins.Plugin) -> list[str]:
    """Every "module:attribute" the descriptor names."""
    found = [*plugin.commands.values(), *([plugin.router] if plugin.router else [])]
    for hook in plugin.hooks:
        found += [hook.handler, *(r for r in (hook.quiet,) if r)]
    return found


def resolve(reference: str) -> Any:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def owners() -> dict[str, str]:
    """Module → the descriptor whose entry points it holds, for every module exactly one
    descriptor names (a module several would name is shared)."""
    named: dict[str, set[str]] = {}
    for plugin in plugins.PLUGINS:
        for reference in references(plugin):
            named.setdefault(reference.partition(":")[0], set()).add(plugin.name)
    return {module: next(iter(names)) for module, names in named.items() if len(names) == 1}


def test_every_package_with_a_service_has_exactly_one_descriptor() -> None:
    with_service = {path.parent.name for path in PACKAGE.glob("*/service.py")}
    described = Counter(p.package for p in plugins.PLUGINS if p.package)
    assert {name for name, count in described.items() if count > 1} == set()
    assert set(described) == with_service, "a package with a service.py needs its descriptor"
    assert len(with_service) >= 10  # the glob found the tree


def test_a_capabilitys_descriptor_is_its_package() -> None:
    names = [p.name for p in plugins.PLUGINS]
    assert len(names) == len(set(names))
    for plugin in plugins.PLUGINS:
        if plugin.capability:
            assert plugin.package == plugin.name
            assert (PACKAGE / plugin.name / "__init__.py").is_file()
            assert (PACKAGE / plugin.name / "service.py").is_file()
    assert tuple(p.name for p in plugins.PLUGINS if p.capability) == plugins.CAPABILITIES
    assert len(plugins.CAPABILITIES) >= 7


def test_every_reference_resolves() -> None:
    for plugin in plugins.PLUGINS:
        for name, reference in plugin.commands.items():
            command = resolve(reference)
            assert isinstance(command, click.Command), reference
            assert command.name == name, reference
        for reference in references(plugin):
            assert callable(resolve(reference)), reference


def test_each_router_is_named_like_its_descriptor(tmp_path: Path) -> None:
    app = App(tmp_path)
    built = {
        plugin.name: resolve(plugin.router)(app) for plugin in plugins.PLUGINS if plugin.router
    }
    assert {name: router.name for name, router in built.items()} == {n: n for n in built}


def test_each_hook_is_previewed_or_says_why_not() -> None:
    # The preview runs a handler itself, dry, unless its descriptor says why it cannot.
    for hook in plugins.hooks():
        assert hook.unpreviewed is None or hook.unpreviewed.strip(), hook


def test_no_two_handlers_of_an_event_share_an_order() -> None:
    # The order a handler runs in is its `order` alone, whichever descriptor comes first.
    orders = Counter((hook.event, hook.order) for hook in plugins.hooks())
    assert [key for key, count in orders.items() if count > 1] == []


def test_the_entries_are_the_descriptors_hooks() -> None:
    assert [(e.event, e.handler, e.order, e.budget) for e in hookspec.HANDLERS] == [
        (h.event, h.handler, h.order, h.budget) for h in plugins.hooks()
    ]
    quiet = [e for e in hookspec.HANDLERS if e.quiet is not None]
    assert [e.handler for e in quiet] == [
        "dshkit.gate.hook:on_write",  # no deliverable's suffix in the payload (`gate.glance`)
        "dshkit.gate.hook:on_command",  # nothing changed since the turn began
        "dshkit.gate.hook:on_stop",  # nor was a deliverable ever recorded: ended after
        "dshkit.graft.hook:on_tool",  # no ledger row names the session (`graft.standing`)
        "dshkit.graft.hook:after_tool",
        "dshkit.graft.hook:on_stop",  # no forced cut was started for the session
        "dshkit.sessions.hook:on_session_pause",  # says nothing: started after the answer
        "dshkit.sessions.hook:on_session_pause",  # (at SessionEnd too)
        "dshkit.memory.hook:on_stop",  # the same
        "dshkit.memory.hook:on_session_end",
        "dshkit.guard.hook:on_read",  # a byte scan for a credential file's name
        "dshkit.guard.hook:on_tool",  # a byte scan for a delete in a tool's name
    ]


def test_a_file_a_handler_waits_for_is_spelled_as_its_package_spells_it() -> None:
    assert {hook.when_exists for hook in plugins.hooks() if hook.when_exists} == {marker.NAME}


def test_each_counter_reads_on_a_new_store(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        for topic, sql in plugins.counters().items():
            assert len(store.db.execute(sql).fetchall()) == 1, topic


def test_the_tools_a_harness_may_run_unasked_are_read_only() -> None:
    from dshkit.mcp.tools import TOOLS

    assert plugins.approved()
    for name in plugins.approved():
        assert TOOLS[name].read_only_hint is True, name


def test_the_cli_has_every_descriptors_commands_and_its_own() -> None:
    from dshkit.cli.app import _SURFACES, cli

    listed = cli.list_commands(click.Context(cli))
    assert set(_SURFACES).isdisjoint(plugins.commands())
    assert sorted(listed) == sorted([*_SURFACES, *plugins.commands()])


def test_a_command_two_descriptors_name_is_refused() -> None:
    with pytest.raises(ValueError, match="'scan' is named by both a and b"):
        plugins._merged([("a", {"scan": "x:y"}), ("b", {"scan": "x:z"})])


@pytest.mark.process
def test_naming_a_capability_imports_nothing() -> None:
    # The hook entry point reads the descriptors on every tool call.
    probe = (
        "import sys; before = set(sys.modules); import dshkit.plugins; "
        "print(sorted(set(sys.modules) - before))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC)},
    )
    assert set(ast.literal_eval(done.stdout)) <= {"__future__", "dshkit", "dshkit.plugins"}


# -- no other module lists capabilities ------------------------------------------------------


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def defines(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def entry_points(
    tree: ast.AST, known: dict[str, Path], owned: dict[str, str]
) -> list[tuple[int, str]]:
    """(line, string) of every string, docstrings aside, that is a "module:attribute" naming
    something a descriptor's module defines, or one of the descriptors' entry points as the
    CLI's table once spelled them (relative to `dshkit.cli`, `dshkit.hooks` or
    `dshkit.web.routers`; a hook face's as "<package>:<handler>")."""
    skip = docstrings(tree)
    named = {reference for plugin in plugins.PLUGINS for reference in references(plugin)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if id(node) in skip:
            continue
        module, colon, attribute = node.value.partition(":")
        if not (colon and attribute.isidentifier()):
            continue
        spelled = module in owned and attribute in defines(known[module])
        relative = f"dshkit.{module}.hook:{attribute}" in named or any(
            f"dshkit.{surface}.{module}:{attribute}" in named
            for surface in ("cli", "hooks", "web.routers")
        )
        if spelled or relative:
            found.append((node.lineno, node.value))
    return sorted(found, key=lambda each: each[0])


def tables(tree: ast.Module, names: set[str]) -> list[tuple[int, str, list[str]]]:
    """(line, assigned name, names held) of every module-level or class-level collection
    literal holding two or more of `names` as strings."""
    found = []
    statements: list[ast.stmt] = list(tree.body)
    for each in tree.body:
        if isinstance(each, ast.ClassDef):
            statements += each.body
    for statement in statements:
        if not isinstance(statement, ast.Assign | ast.AnnAssign) or statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        target = ", ".join(ast.unparse(t) for t in targets)
        for node in ast.walk(statement.value):
            items: list[ast.expr | None] = []
            if isinstance(node, ast.Dict):
                items = list(node.keys)
            elif isinstance(node, ast.List | ast.Tuple | ast.Set):
                items = list(node.elts)
            held = sorted(
                {
                    item.value
                    for item in items
                    if isinstance(item, ast.Constant) and item.value in names
                }
            )
            if len(held) >= 2:
                found.append((statement.lineno, target, held))
    return found


def imported(name: str, path: Path, tree: ast.Module, known: dict[str, Path]) -> Iterator[str]:
    """Every module of `known` the module imports (anywhere in it)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield from (m for m in [module] if m in known)
            yield from (f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known)


def listings(name: str, path: Path, known: dict[str, Path], owned: dict[str, str]) -> list[str]:
    """What in one module lists capabilities, each as a line of the failure."""
    tree = ast.parse(path.read_text(), str(path))
    # A descriptor's name (a capability, a router, a topic) or a tool it lets run unasked.
    names = {plugin.name for plugin in plugins.PLUGINS} | set(plugins.approved())
    found = [
        f"{name}:{line} names the entry point {text!r}"
        for line, text in entry_points(tree, known, owned)
    ]
    found += [
        f"{name}:{line} {target} holds {', '.join(held)}"
        for line, target, held in tables(tree, names)
        if (name, target) not in ALLOWED_TABLES
    ]
    mine = owned.get(name)
    others = sorted(
        {owned[m] for m in imported(name, path, tree, known) if m in owned} - {mine, None}
    )
    if len(others) >= 2:
        found.append(f"{name} imports the surface modules of {', '.join(others)}")
    return found


def test_no_module_but_plugins_lists_capabilities() -> None:
    found, owned = modules(), owners()
    wrong = [
        line
        for name, path in found.items()
        if name != "dshkit.plugins"
        for line in listings(name, path, found, owned)
    ]
    assert wrong == [], "move these into the descriptors (dshkit/plugins.py):\n" + "\n".join(wrong)


OLD_TABLES = '''
"""The old tables, as they were written."""
from . import capability, gate, memory
from .x import y

_COMMANDS = {"memory": "memory:memory", "gate": "gate:gate"}
HANDLERS = (Entry("Stop", "dshkit.memory.hook:on_stop"),)
ROUTERS = {"memory": lambda app: memory.router(app.memory), "gate": None}
_COUNTERS = {"sessions": "SELECT 1", "memory": "SELECT 2"}


class Tools:
    APPROVED = ("graft_prepare", "graft_read_result")
    ASKED = ("graft_prepare", "graft_slice_and_inject")  # (one such tool is no table)


def fine():
    """A docstring may say "dshkit.memory.hook:on_stop"."""
    return {"memory": 1, "gate": 2}  # (not a table: built when called)
'''


def test_each_table_let_through_is_there() -> None:
    found = modules()
    names = {plugin.name for plugin in plugins.PLUGINS}
    for module, target in ALLOWED_TABLES:
        tree = ast.parse(found[module].read_text())
        assert target in {name for _, name, _ in tables(tree, names)}, (module, target)


def test_the_checker_sees_the_old_tables(tmp_path: Path) -> None:
    source = tmp_path / "__init__.py"
    source.write_text(OLD_TABLES)
    said = listings("dshkit.web.routers", source, modules(), owners())
    assert [line.partition(" ")[2] for line in said] == [
        "names the entry point 'memory:memory'",
        "names the entry point 'gate:gate'",
        "names the entry point 'dshkit.memory.hook:on_stop'",
        "_COMMANDS holds gate, memory",
        "ROUTERS holds gate, memory",
        "_COUNTERS holds memory, sessions",
        "APPROVED holds graft_prepare, graft_read_result",
        "imports the surface modules of capability, gate, memory",
    ]
