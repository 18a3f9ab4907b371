#!/usr/bin/env bash
# System packages the project needs, installed with apt when missing (Debian/Ubuntu, as root).
set -euo pipefail

need=()
python_bin=$(command -v python3.11 || command -v python3)
"$python_bin" -c "import venv, ensurepip" 2>/dev/null || need+=(python3-venv)

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
apt-get install -y -qq "${need[@]}" >/dev/null
