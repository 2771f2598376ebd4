"""Differentially private releases of the signals (the only figures the team role sees).

``cubes`` says what is released and what one installation-week can change in each cube;
``mechanism`` calibrates OpenDP's Gaussian (and, for cubes without a known domain, its
threshold) to them; ``store`` draws each closed period once and reads the stored cells back;
``published`` states the parameters. Import from the submodules (``cubes`` stays free of OpenDP).
"""
