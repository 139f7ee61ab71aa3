#!/usr/bin/env bash
# One entry point for a fresh machine:
#   ./alma.sh demo   set everything up, create a demo root, start alma-agentd on it (foreground)
#   ./alma.sh test   set everything up, then run the checks and the whole test suite
#   ./alma.sh setup  only set up (.venv with the project and its dev tools; sandbox tools)
#   ./alma.sh portable DIR [ROOT]  set up, then write into DIR (beside ROOT, on the portable
#                    disk) what starts ALMA on another PC offline: docs/portable.md
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
venv="$here/.venv"
py=${PYTHON:-python3}

say() { printf '[alma.sh] %s\n' "$*" >&2; }

setup_system() {
    # The sandbox backends (bubblewrap, firejail) and restic (`alma-ctl backup`) come from
    # Debian's packages. Landlock needs nothing. Without root or sudo we carry on: ALMA uses
    # whichever backend works, and `alma-ctl backup` says restic is missing.
    local missing=()
    command -v bwrap >/dev/null || missing+=(bubblewrap)
    command -v firejail >/dev/null || missing+=(firejail)
    command -v restic >/dev/null || missing+=(restic)
    # The web panel's browser tests drive Debian's chromium through Playwright (pip, dev extra);
    # `playwright install` would download a browser, which fails offline.
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
            say "cannot install ${missing[*]} without root; the tests of those backends will say so"
            return 0
        fi
    fi
    if command -v apt-get >/dev/null; then
        say "installing ${missing[*]} from Debian's packages"
        $sudo apt-get update -qq >/dev/null || true
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

# llama.cpp detects the build machine's CPU by default (GGML_NATIVE) and then runs only there,
# and on a CPU with AMX its AMX matrix kernels crash at the first decode (docs/chat.md). The
# model library is built for the x86-64 baseline every CPU since 2013 has instead: the root
# and its venv may travel on a disk to another computer.
llama_cmake_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"

setup_llama() {
    # pip's own wheel cache is keyed by the source, not by CMAKE_ARGS, so it would hand back a
    # native build made earlier: the wheel is built once per version and flags into a folder
    # of its own, and installed from there.
    local version key stamp wheels
    version=$(sed -n 's/^ *"llama-cpp-python==\([0-9.]*\)".*/\1/p' pyproject.toml | head -n 1)
    key=$(printf '%s %s' "$version" "$llama_cmake_args" | sha256sum | cut -c1-16)
    stamp="$venv/.alma-llama"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then return 0; fi
    wheels="${XDG_CACHE_HOME:-$HOME/.cache}/alma/wheels/$key"
    if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
        say "building llama-cpp-python $version for the local model (portable x86-64): about"
        say "10 minutes on 2 cores, once per machine ($wheels keeps the build)"
        rm -rf "$wheels.tmp"
        # The model library's C++ build uses every core.
        CMAKE_ARGS="$llama_cmake_args" \
            CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)} \
            "$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps \
            --no-cache-dir --no-binary llama-cpp-python -w "$wheels.tmp" "llama-cpp-python==$version"
        mkdir -p "$(dirname "$wheels")"
        mv "$wheels.tmp" "$wheels"
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
        "$wheels"/llama_cpp_python-*.whl
    echo "$key" > "$stamp"
}

setup_python() {
    local stamp="$venv/.alma-installed"
    local want
    want=$(sha256sum pyproject.toml | cut -c1-16)
    if [ ! -x "$venv/bin/python" ]; then
        "$py" -c 'import sys; assert sys.version_info >= (3, 11), "ALMA needs Python 3.11 or newer"'
        "$py" -m venv "$venv"
    fi
    setup_llama  # first: the project's install then finds llama-cpp-python already there
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
    say "installing ALMA and its dependencies into .venv (about a minute)"
    # compat: a plain .pth path entry; the default editable mode installs an import hook that
    # every Python start in the venv pays for (about 13 ms, alma-ctl included).
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -e ".[dev]" \
        --config-settings editable_mode=compat
    echo "$want" > "$stamp"
}

compile_bytecode() {
    # As a wheel install would: alma-ctl then starts from bytecode even where
    # PYTHONDONTWRITEBYTECODE is set (it only stops Python from writing caches).
    "$venv/bin/python" -m compileall -q -j 0 agent policies actions sandbox state control >/dev/null
}

setup() { setup_system; setup_python; compile_bytecode; }

cmd=${1:-}
shift || true
case "$cmd" in
    setup) setup ;;
    demo)
        setup
        root=${ALMA_ROOT:-$here/demo-root}
        fresh=0
        [ -f "$root/system/autonomy.conf" ] || fresh=1
        "$venv/bin/alma-ctl" --root "$root" init --with-examples >/dev/null
        if [ "$fresh" = 1 ]; then
            # A demo shows things at once: files settle for 5 s here instead of the default 120.
            sed -i 's/^settle_seconds = 120$/settle_seconds = 5  # demo root: 120 by default/' \
                "$root/system/autonomy.conf"
        fi
        say "demo root: $root   (in another terminal: .venv/bin/alma-ctl --root $root status)"
        exec "$venv/bin/alma-agentd" --root "$root" "$@"
        ;;
    portable)
        [ $# -ge 1 ] || { echo "usage: ./alma.sh portable DIR [ROOT]" >&2; exit 2; }
        setup
        mkdir -p "$1"
        key=$(cat "$venv/.alma-llama")
        "$venv/bin/python" portable/prepare.py "$1" --project "$here" --start-script portable/alma-start \
            --llama-wheels "${XDG_CACHE_HOME:-$HOME/.cache}/alma/wheels/$key" ${2:+--root "$2"}
        ;;
    test)
        setup
        source "$venv/bin/activate"
        # Installed sandbox tools must be tested, never skipped (tests/unit/test_confine.py).
        if command -v bwrap >/dev/null && command -v firejail >/dev/null; then
            export ALMA_REQUIRE_BACKENDS=1
        fi
        say "ruff";          ruff check . && ruff format --check .
        say "mypy";          mypy
        say "import layers"; lint-imports
        say "pytest"
        set +e
        pytest "$@"
        rc=$?
        set -e
        # pytest exits 5 when it collected no test: that must never pass silently.
        if [ "$rc" -eq 5 ]; then say "pytest collected no test: failing"; exit 1; fi
        exit "$rc"
        ;;
    *)
        echo "usage: ./alma.sh demo|test|setup [args] | portable DIR [ROOT]" >&2
        exit 2
        ;;
esac
