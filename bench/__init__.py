"""The benches: scripts that measure searchain (answer quality beside the papers', retrieval
recall and cost, reliability, confidence) and write their figures under ``results/``.

Each is a module run from the repository root, with searchain installed (``pip install -e .``,
what ``scripts/install.sh`` does)::

    python -m bench.<name> --help

``bench/README.md`` lists them by what they measure; ``bench.kit`` holds the little they
share (where the repository, its results and the shared data are; the ``searchain`` command).
A bench imports searchain as any user does, and no test imports a bench: what both need
lives in ``src/searchain``.
"""
