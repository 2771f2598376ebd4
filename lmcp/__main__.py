"""``python -m lmcp.cli``: the same as the ``lmcp`` command."""

from lmcp.cli import main

main()
