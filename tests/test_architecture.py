"""The import structure ARCHITECTURE.md describes, checked: layers only import downwards,
capabilities never import each other, and no module imports itself back through others; the
hook path's faces (`<package>/hook.py`) import no other capability, and the hook runtime and
the preview import none at all (they reach the faces by the names the descriptors give).

Every `import` statement of `src/dshkit` counts for the layers, those inside functions too (a
lazy import is still a dependency). The cycle check follows what runs when a module is
imported: imports under `if TYPE_CHECKING:` never run, and one inside a function runs only
when it is called, after every module it names has loaded — the guard's lexer needs the
command rules to judge a `$(…)`, and the rules need the lexer: that recursion is the
shell's, and a late import is how it is written without a module half loaded.
"""

from __future__ import annotations

import ast
from pathlib import Path

from dshkit import plugins

from .support.paths import REPO

SRC = REPO / "src"
PACKAGE = "dshkit"

# Lowest first: a module may import its own layer or a lower one. A name is a module or a
# package (then every module below it). ARCHITECTURE.md explains each layer. The capability
# packages are those with a capability's descriptor in `dshkit.plugins`: a new package is in no
# layer until it has one (tests/test_plugins.py checks each has exactly one).
LAYERS: list[tuple[str, ...]] = [
    (
        "errors",
        "lazy",
        "jsonscan",
        "quiet",
        "paths",
        "config",
        "language",
        "harnesses",
        "procs",
        "chromium",
        "jobs",
    ),
    ("store", "storeview", "words", "turns", "hookio"),
    ("sessions", "llm", "provenance"),
    plugins.CAPABILITIES,
    ("plugins", "install", "hookspec", "inject", "overview", "app"),
    ("hooks",),
    ("web",),
    ("mcp",),
    ("cli",),
    ("__main__",),
]
# Capabilities stand side by side: none imports another (what they share lives lower).
CAPABILITIES = set(LAYERS[3])


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module of dshkit, line, at import) for every import statement in the
    module; `at import` is False for those under `if TYPE_CHECKING:` and those inside a
    function (they run later, if ever)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def target(base: str, member: str | None) -> str | None:
        for candidate in ([f"{base}.{member}"] if member else []) + [base]:
            if candidate in known:
                return candidate
        return None

    def visit(node: ast.AST, runs: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            runs = False
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                visit(statement, False)
            for statement in node.orelse:
                visit(statement, runs)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                hit = target(alias.name, None)
                if hit:
                    found.append((hit, node.lineno, runs))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == PACKAGE or module.startswith(PACKAGE + "."):
                for alias in node.names:
                    hit = target(module, alias.name)
                    if hit:
                        found.append((hit, node.lineno, runs))
        for child in ast.iter_child_nodes(node):
            visit(child, runs)

    visit(tree, True)
    return found


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, the layer entry the module falls under) of a dshkit module."""
    rest = module.split(".")[1:]
    if not rest:
        return 0, ""  # the package itself: only its version
    for index, names in enumerate(LAYERS):
        if rest[0] in names:
            return index, rest[0]
    raise AssertionError(
        f"{module} is in no layer: give a capability its descriptor in dshkit.plugins, "
        "or add the module to LAYERS; and to ARCHITECTURE.md"
    )


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def test_every_module_has_a_layer() -> None:
    for module in modules():
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for module, targets in graph().items():
        mine, _ = layer_of(module)
        for imported, line, _runs in targets:
            theirs, _ = layer_of(imported)
            if theirs > mine:
                wrong.append(f"{module}:{line} imports {imported} (layer {theirs} > {mine})")
    assert not wrong, "imports that go up a layer:\n" + "\n".join(wrong)


def test_capabilities_do_not_import_each_other() -> None:
    wrong = []
    for module, targets in graph().items():
        _, mine = layer_of(module)
        for imported, line, _runs in targets:
            _, theirs = layer_of(imported)
            if mine in CAPABILITIES and theirs in CAPABILITIES and theirs != mine:
                wrong.append(f"{module}:{line} imports {imported}")
    assert not wrong, "a capability imports another:\n" + "\n".join(wrong)


def test_no_import_cycles() -> None:
    edges = {
        module: sorted({imported for imported, _line, runs in targets if runs} - {module})
        for module, targets in graph().items()
    }
    # A package's face importing its own modules, and those importing siblings through the
    # face, is one package; cycles are looked for between modules all the same.
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, []):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            walk(module)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The walker itself: an upward import and a relative one are both seen."""
    source = tmp_path / "mod.py"
    source.write_text(
        "from __future__ import annotations\n"
        "from ..cli import app\n"
        "def later():\n    from dshkit.web import server\n"
        "if TYPE_CHECKING:\n    from ..mcp import tools\n"
    )
    known = {"dshkit.cli.app", "dshkit.web.server", "dshkit.mcp.tools", "dshkit.sessions.x"}
    found = imports("dshkit.sessions.x", source, known)
    assert ("dshkit.cli.app", 2, True) in found
    assert ("dshkit.web.server", 4, False) in found  # inside a function: later
    assert ("dshkit.mcp.tools", 6, False) in found


# What a surface may reach of a capability (or of the sessions and LLM layer): the package's
# face, its service and the JSON shapes of its results, nothing of how it works inside.
SURFACES = ("web", "mcp", "cli")
FACE_PARTS = ("service", "wire")


def test_surfaces_import_only_services_faces_and_wire_types() -> None:
    reached = CAPABILITIES | {"sessions", "llm"}
    wrong = []
    for module, targets in graph().items():
        if module.split(".")[1:2] not in [[surface] for surface in SURFACES]:
            continue
        for imported, line, _runs in targets:
            parts = imported.split(".")[1:]  # the package `dshkit` itself is [] (its version)
            if len(parts) > 1 and parts[0] in reached and parts[1] not in FACE_PARTS:
                wrong.append(f"{module}:{line} imports {imported}")
    assert not wrong, "surfaces reaching inside a capability:\n" + "\n".join(wrong)


# The hook path: each descriptor's handlers are functions of its package's face, and what runs
# them (the runtime in `hooks/`, the preview in `inject/`) reaches them only by those names.
FACE = "hook"


def test_each_handler_is_a_function_of_its_packages_face() -> None:
    known = modules()
    wrong = []
    for plugin in plugins.PLUGINS:
        for hook in plugin.hooks:
            module = hook.handler.partition(":")[0]
            if module != f"{PACKAGE}.{plugin.package}.{FACE}" or module not in known:
                wrong.append(f"{plugin.name}: {hook.handler}")
    assert not wrong, "handlers outside their package's hook face:\n" + "\n".join(wrong)
    assert len({hook.handler for hook in plugins.hooks()}) >= 15  # (the walk found them)


def test_a_face_imports_no_other_capability() -> None:
    faces = {
        f"{PACKAGE}.{plugin.package}.{FACE}": plugin.package
        for plugin in plugins.PLUGINS
        if plugin.hooks
    }
    wrong = []
    for module, targets in graph().items():
        own = faces.get(module)
        if own is None:
            continue
        for imported, line, _runs in targets:
            _, theirs = layer_of(imported)
            if theirs in CAPABILITIES and theirs != own:  # (the sessions layer is below)
                wrong.append(f"{module}:{line} imports {imported}")
    assert len(faces) >= 7
    assert not wrong, "a face importing another capability:\n" + "\n".join(wrong)


def test_the_hook_runtime_and_the_preview_import_no_capability() -> None:
    wrong = []
    for module, targets in graph().items():
        _, mine = layer_of(module)
        if mine not in ("hooks", "inject"):
            continue
        for imported, line, _runs in targets:
            _, theirs = layer_of(imported)
            if theirs in CAPABILITIES or (mine == "hooks" and theirs in ("sessions", "llm")):
                wrong.append(f"{module}:{line} imports {imported}")
    assert not wrong, "the hook runtime reaching a capability:\n" + "\n".join(wrong)
