"""Differentially private releases of the signals (the only figures the team role sees).

``cubes`` says what is released and each cube's contribution bounds; ``mechanism`` calibrates
OpenDP's Laplace-with-threshold to them; ``store`` computes each closed day once and reads the
stored cells back. Import from the submodules (``cubes`` stays free of OpenDP).
"""
