"""dshkit as Claude-Code-style command hooks, for Claude Code, the Codex CLI and DSH's bridge."""
