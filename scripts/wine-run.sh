#!/usr/bin/env bash
# wine-run.sh PROGRAM.exe [ARGS...] - run a Windows program under wine for the Windows test jobs (the
# CMake toolchain's CROSSCOMPILING_EMULATOR, and scripts/test-windows.sh).
#   - always under a timeout (CUDOT_WINE_TIMEOUT seconds, default 300): a hung program fails, never stalls CI;
#   - loader errors visible (WINEDEBUG=-all,err+module): a missing DLL names itself on stderr;
#   - a private prefix (WINEPREFIX, default ~/.cache/cudot-wine), created on first use.
# Wine is not Windows: what passes here is Wine's implementation of the Win32 API.
set -euo pipefail
export WINEDEBUG=${WINEDEBUG:--all,err+module}
export WINEPREFIX=${WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/cudot-wine}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}  # no Mono/Gecko install prompts
loader=/usr/lib/wine/wine64
[[ -x $loader ]] || loader=$(command -v wine64 || command -v wine)
mkdir -p "$WINEPREFIX"
# One wineserver per prefix; -p0 would make it exit at once, the default keeps it for 3 s between runs.
exec timeout --kill-after=10 "${CUDOT_WINE_TIMEOUT:-300}" "$loader" "$@"
