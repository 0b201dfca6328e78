#!/usr/bin/env bash
# Installs Debian's chromium and a CJK font for the delivery gate and the capability probes
# (skipping what is already there): browser downloads are impossible here, so Playwright
# drives /usr/bin/chromium (../shared/notes/headless-chromium.md).
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
# Without a CJK font Chinese renders as boxes in the verdict screenshots.
fc-list 2>/dev/null | grep -qi "wqy\|noto sans cjk" || need+=(fonts-wqy-microhei)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
echo "browser ready: $(/usr/bin/chromium --version 2>/dev/null)"
