"""The shell: the ``lmcp`` command and the generators, composing every package below.

Only this package may import the client, the collector, Cloud Skills and analysis together;
nothing below it imports it (``make check`` enforces the layers).
"""
