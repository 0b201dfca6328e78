"""What the install tests find in a person's home: settings of someone else's, with their own
hooks, that installing dshkit must keep as they are."""

from __future__ import annotations

from typing import Any

FOREIGN: dict[str, Any] = {
    "theme": "dark",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "/usr/local/bin/audit-bash", "timeout": 5}
                ],
            }
        ],
        "SessionStart": [{"matcher": "", "hooks": [{"type": "command", "command": "echo hi"}]}],
    },
}
