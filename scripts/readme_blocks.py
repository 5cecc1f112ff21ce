#!/usr/bin/env python3
"""readme_blocks.py README OUT_DIR NAME=NEEDLE... - writes, for each NAME=NEEDLE, the first fenced code
block of README that contains NEEDLE to OUT_DIR/NAME, exactly as written (scripts/test-readme.sh runs
them). Exits 1 naming any NEEDLE no block contains, so a README edit cannot silently drop a recipe."""
import pathlib
import re
import sys


def blocks(text):
    return [m.group(1) for m in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)]


def main(readme, out, wanted):
    found = blocks(pathlib.Path(readme).read_text())
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    missing = []
    for item in wanted:
        name, needle = item.split("=", 1)
        block = next((b for b in found if needle in b), None)
        if block is None:
            missing.append(needle)
        else:
            (out / name).write_text(block)
    if missing:
        print(f"readme_blocks: no code block of {readme} contains: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
