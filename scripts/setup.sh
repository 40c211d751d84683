#!/usr/bin/env bash
# Idempotent set-up used by `make run` and `make test`:
#   1. Chromium: when /usr/lib/chromium/chromium-headless-shell is missing, install Debian's
#      chromium-headless-shell and chromium with apt-get (root only; otherwise say what to install).
#   2. nginx, for the multi-host test (tests/deploy/test_nginx.py runs its own nginx on loopback):
#      when /usr/sbin/nginx is missing, install Debian's nginx (root only; otherwise say what to
#      install). The system service the package sets up is stopped and disabled again.
#   3. Debian's Python HTML docs (python3.11-doc), the real page of `make bench`'s snapshot
#      table (bench/snapshot_compare.py serves /usr/share/doc/python3.11/html on loopback):
#      installed with apt-get when missing (root only; otherwise say what to install).
#   4. Python: create .venv and install this package with its dev dependencies when pyproject.toml
#      changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
HEADLESS_SHELL=/usr/lib/chromium/chromium-headless-shell
PACKAGES="chromium-headless-shell chromium"

if [ -z "${BROWSER_TOOL_CHROME:-}" ] && [ ! -x "$HEADLESS_SHELL" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: $HEADLESS_SHELL is missing; installing $PACKAGES with apt-get" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES >/dev/null
    else
        echo "setup: Chromium is missing ($HEADLESS_SHELL not found)." >&2
        echo "setup: install the Debian packages: sudo apt-get install $PACKAGES" >&2
        echo "setup: (or point BROWSER_TOOL_CHROME at a Chrome binary that is not a shell wrapper)" >&2
        exit 1
    fi
fi

NGINX=/usr/sbin/nginx
if [ ! -x "$NGINX" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: $NGINX is missing; installing nginx with apt-get (for the multi-host test)" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
        # The test starts nginx itself; a system nginx on port 80 is nobody's wish here.
        if [ -d /run/systemd/system ]; then
            systemctl disable --now nginx >/dev/null 2>&1 || true
        fi
    else
        echo "setup: nginx is missing ($NGINX not found); the multi-host test needs it." >&2
        echo "setup: install the Debian package: sudo apt-get install nginx" >&2
        echo "setup: (the test runs its own nginx on loopback; the system service may stay off)" >&2
        exit 1
    fi
fi

PYTHON_DOCS=/usr/share/doc/python3.11/html/library/index.html
if [ ! -f "$PYTHON_DOCS" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: $PYTHON_DOCS is missing; installing python3.11-doc (make bench's snapshot table)" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-doc >/dev/null
    else
        echo "setup: python3.11-doc is missing; make bench's snapshot table leaves its Python docs pages out." >&2
        echo "setup: install the Debian package: sudo apt-get install python3.11-doc" >&2
    fi
fi

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: Python >= 3.11 is required; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi

stamp="$VENV/.installed"
if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating $VENV" >&2
    "$PYTHON" -m venv "$VENV"
fi
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "setup: installing browser-tool and its dependencies into $VENV" >&2
    log="$VENV/install.log"
    if ! { "$VENV/bin/python" -m pip install --upgrade pip &&
           "$VENV/bin/python" -m pip install -e '.[dev]'; } >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "setup: pip install failed; the whole log is in $log" >&2
        exit 1
    fi
    touch "$stamp"
fi
