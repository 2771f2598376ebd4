"""``python -m client.cli``: the same as the ``lmcp`` command."""

from client.cli import main

main()
