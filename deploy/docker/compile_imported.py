"""Bytecode for what the server imports, and nothing else (the image's builder stage, Dockerfile).

Imports every ``agenthost`` module (each adapter, model runtime and framework
factory the variant carries), so Python writes the bytecode of each module
that pulls in. The rest of the environment (other SQL dialects, other model
providers' clients, libraries' command-line tools: ~35 MB of bytecode) stays
source only; a module of it that is ever imported is compiled in memory then,
as the image's file system is read-only.

Run with the environment's Python, bytecode writing on (no
PYTHONDONTWRITEBYTECODE); prints what it compiled and what the variant lacks.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import agenthost


def main() -> int:
    if sys.dont_write_bytecode:
        print("bytecode writing is off (PYTHONDONTWRITEBYTECODE)", file=sys.stderr)
        return 1
    missing = []
    for module in pkgutil.walk_packages(agenthost.__path__, "agenthost."):
        if module.name.endswith(".__main__"):
            continue  # runs the command line
        try:
            importlib.import_module(module.name)
        except ImportError as error:  # an extra this variant leaves out
            missing.append(f"{module.name} ({str(error).splitlines()[0]})")
    print(f"compiled what {len(sys.modules)} modules need")
    for line in missing:
        print(f"not in this variant: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
