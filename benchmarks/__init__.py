"""Benchmarks: ``make bench`` runs every ``bench_*.py`` module's ``run()`` in one process.

Figures are medians with ratios against a baseline measured side by side in the same run: this
machine is shared and noisy, so absolute numbers wander and ratios hold.
"""
