#!/usr/bin/env bash
# System packages the project needs, installed with apt when missing (Debian/Ubuntu, as root):
# python3-venv for the virtualenv, Debian's Chromium for the browser tests (never `playwright install`),
# redis-server for the multi-process live-view tests (channels-redis), gettext (msgfmt) to compile the
# translations, and a CJK font so Chromium draws the Chinese UI and demo data in the browser tests.
set -euo pipefail

need=()
python_bin=$(command -v python3.11 || command -v python3)
"$python_bin" -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)
test -x /usr/bin/chromium || need+=(chromium)
command -v redis-server >/dev/null || need+=(redis-server)
command -v npm >/dev/null || need+=(npm)
command -v msgfmt >/dev/null || need+=(gettext)
test -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc || need+=(fonts-wqy-microhei)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "Missing system packages: ${need[*]}. Install them (e.g. sudo apt-get install ${need[*]}) and re-run." >&2
  exit 1
fi
echo "Installing system packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian starts redis-server as a service on install; the tests start their own on a free port.
if command -v systemctl >/dev/null && systemctl is-active --quiet redis-server 2>/dev/null; then
  systemctl stop redis-server || true
fi
