"""DSH's patch layers (`cordis.patch.yml`), read and written: the marked block that mounts
DSH's Claude-Code hook bridge on dshkit's settings file, and the one that runs dshkit's MCP
server (a `@deepseek-ai/dsh-mcp-client` entry).

A patch layer is a YAML list of plugin entries, read with ruamel.yaml's round-trip loader
(`harnesses.config_files`, where the capability reads the same files). Each of dshkit's
entries is serialised by ruamel.yaml, in the layout DSH's own docs use, into a marked block
of its own; the person's part of the file is never serialised again, so its comments,
quoting and indentation keep every byte (dumping the whole document back would re-indent
it, and lose a comment that follows an entry dshkit takes out). The file with the block is
read back before it is written: its entries must be the person's, plus dshkit's exactly.
`dsh plugin add` starts a layer as the empty flow list `[]`: the block stands in for it,
and gives it back when it is taken out with nothing else left in the list.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import harnesses
from ..harnesses.config_files import Unreadable, load_yaml
from ..harnesses.dsh import MCP_CLIENT as DSH_MCP_CLIENT
from ..harnesses.dsh import plugins as dsh_plugins
from ..harnesses.dsh import servers as dsh_servers
from .blocks import Block
from .commands import SERVER_NAME
from .model import InstallError, unreadable

HOOKS_BLOCK = Block(
    "# >>> dshkit hooks (managed by `dshkit install-hooks`; `dshkit uninstall-hooks` removes it)",
    "# <<< dshkit hooks",
)
MCP_BLOCK = Block(
    "# >>> dshkit MCP server (managed by `dshkit install-hooks`; `uninstall-hooks` removes it)",
    "# <<< dshkit MCP server",
)
STANDS_FOR_EMPTY = " — stands for the empty list `[]`"
MCP_ID = "mcp-dshkit"  # the MCP client entry's id


def with_bridge(path: Path, text: str | None, config: Path, bridge: harnesses.Bridge) -> str:
    """The layer with dshkit's block mounting the hook bridge on the settings file `config`."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    # Quoted as DSH's docs write them (a plain scalar cannot start with `@`); paths in double
    # quotes, so any path reads back as the same string.
    entry = {
        "id": bridge.plugin_id,
        "name": SingleQuotedScalarString(bridge.plugin_name),
        "config": {"configPath": DoubleQuotedScalarString(str(config))},
    }

    def refuse(plugins: list[Mapping[str, Any]]) -> None:
        for plugin in plugins:
            if plugin.get("id") == bridge.plugin_id or plugin.get("name") == bridge.plugin_name:
                raise InstallError(
                    f"{path} already mounts the Claude-Code hook bridge; add dshkit's hooks to "
                    "its configPath file by hand, or remove that entry first"
                )

    return _with_entry(path, text, HOOKS_BLOCK, entry, refuse)


def without_bridge(path: Path, text: str) -> str:
    return _without(text, HOOKS_BLOCK)


def mounted(text: str, bridge: harnesses.Bridge) -> tuple[bool, str | None]:
    """Whether the layer has dshkit's bridge block, and the settings file it mounts (None:
    the block mounts none dshkit can read)."""
    body = HOOKS_BLOCK.body(text)
    if body is None:
        return False, None
    try:
        document = load_yaml("dshkit's block", body)
    except Unreadable:
        return True, None
    for plugin in dsh_plugins(document):
        config = plugin.get("config")
        if plugin.get("id") == bridge.plugin_id and isinstance(config, Mapping):
            return True, str(config.get("configPath"))
    return True, None


def with_mcp_server(path: Path, text: str | None, command: list[str]) -> str:
    """The layer with dshkit's block running `command` as the MCP server `dshkit`."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    # Quoted as DSH's docs write them (a plain scalar cannot start with `@`); paths in double
    # quotes, so any path reads back as the same string.
    entry = {
        "id": MCP_ID,
        "name": SingleQuotedScalarString(DSH_MCP_CLIENT),
        "config": {
            "serverName": SERVER_NAME,
            "transport": "stdio",
            "command": DoubleQuotedScalarString(command[0]),
            "args": [DoubleQuotedScalarString(word) for word in command[1:]],
        },
    }

    def refuse(plugins: list[Mapping[str, Any]]) -> None:
        try:
            servers = dsh_servers(str(path), plugins)
        except Unreadable as exc:
            raise unreadable(exc) from exc
        if any(server.name == SERVER_NAME for server in servers):
            raise InstallError(
                f"{path} already configures an MCP server named {SERVER_NAME!r} outside "
                "dshkit's block; remove it first"
            )

    return _with_entry(path, text, MCP_BLOCK, entry, refuse)


def without_mcp_server(path: Path, text: str) -> str:
    return _without(text, MCP_BLOCK)


def _with_entry(
    path: Path,
    text: str | None,
    block: Block,
    entry: dict[str, Any],
    refuse: Callable[[list[Mapping[str, Any]]], None],
) -> str:
    """The layer with `block` holding `entry` (an `insert` of it): renewed where the block is,
    else in place of an empty `[]`, else appended to the block list. `refuse` raises when the
    person's part already does what the entry would."""
    from ruamel.yaml.comments import CommentedSeq

    before = text or ""
    has_block = block.span(before, path) is not None
    theirs = block.remove(before)
    try:
        document = load_yaml(str(path), theirs)
    except Unreadable as exc:
        raise unreadable(exc) from exc
    refuse(list(dsh_plugins(document)))
    body = _serialised(entry)
    by_hand = InstallError(
        f"{path} is not a YAML block list dshkit can extend; add this entry by hand:\n{body}"
    )
    if has_block:
        after = block.put(before, body, path)
    elif isinstance(document, CommentedSeq) and not document:
        lines = before.splitlines(keepends=True)
        at = document.lc.line  # where the empty list is: the block takes its line
        if at >= len(lines) or lines[at].strip() != "[]":
            raise by_hand
        lines[at] = block.around(body, STANDS_FOR_EMPTY)
        after = "".join(lines)
    elif document is None or (isinstance(document, CommentedSeq) and not document.fa.flow_style()):
        after = block.put(before, body, path)
    else:
        raise by_hand
    _read_back(path, after, _items(document), entry, by_hand)
    return after


def _read_back(
    path: Path, after: str, theirs: int, entry: dict[str, Any], by_hand: InstallError
) -> None:
    """Refuse a layer that does not read back as the person's `theirs` items plus `entry`."""
    try:
        document = load_yaml(str(path), after)
    except Unreadable as exc:
        raise by_hand from exc
    found = [p for p in dsh_plugins(document) if p.get("id") == entry["id"]]
    if _items(document) != theirs + 1 or found != [entry]:
        raise by_hand


def _items(document: Any) -> int:
    return len(document) if isinstance(document, list) else 0


def _without(text: str, block: Block) -> str:
    """The layer without `block`; the empty list `[]` again where the block stood for it and
    nothing else is left in the list."""
    try:
        span = block.span(text)
    except InstallError:
        return text  # no end line: nothing dshkit can take out safely
    if span is None:
        return text
    start, end = span
    rest = text[:start] + text[end:]
    if text[start:].partition("\n")[0].endswith(STANDS_FOR_EMPTY) and _empty(rest):
        return text[:start] + "[]\n" + text[end:]
    return rest


def _empty(text: str) -> bool:
    """Whether a layer holds nothing but comments and blank lines."""
    try:
        return load_yaml("", text) is None
    except Unreadable:
        return False


def _serialised(entry: dict[str, Any]) -> str:
    """`- insert: [entry]` as a block list item at the left margin, in DSH's docs' layout."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 1 << 16  # a long path stays on its line
    stream = io.StringIO()
    yaml.dump([{"insert": [entry]}], stream)
    return textwrap.dedent(stream.getvalue())  # the top-level dash at the margin, as theirs
