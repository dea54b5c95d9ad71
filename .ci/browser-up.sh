#!/usr/bin/env bash
# Chromium and its WebDriver from the Debian packages, for the tests that open the reports in a
# headless browser (tests/browser.py; they skip, saying why, where neither is installed).
# Idempotent: does nothing when both are installed. Needs root (apt-get) otherwise.
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
if have chromium && have chromedriver; then
    echo "browser-up: $(chromium --version 2>/dev/null || echo chromium) and chromedriver already installed"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "browser-up: installing chromium and chromium-driver needs root (apt-get)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver
echo "browser-up: $(chromium --version)"
