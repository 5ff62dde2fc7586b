"""Start a new run with another run's finished records of the methods that did not change.

Changing one method's setting (SearChain's θ, say) makes a new configuration, so the run
directory that holds the old one refuses to resume — rightly. But the other methods of that
run (the baselines) would answer exactly as before: ``searchain eval --reuse-from OLD``
copies their records into the new run instead of recomputing them. A method's records are
taken only when everything that shapes its answers is the same in both runs: the data set
and its items (file hash, limit, seed; a larger limit with the same seed may reuse a smaller
run, whose items it holds), the model, API form, retriever and index, the
method's own resolved settings (``method_config``), and the environment's model file and
index. Copied records say where they came from (``reused_from``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from searchain.eval.method_kinds import plans_chains
from searchain.eval.run_environment import environment_differences
from searchain.eval.runner import MANIFEST, RESULTS, read_results

# Keys of a run's config that belong to single methods, compared per method instead.
PER_METHOD = ("methods", "method_config", "options")


class ReuseRefused(ValueError):
    """The source run cannot lend records to this one (said why)."""


def reusable_methods(
    source: Path, config: dict[str, Any], environment: dict[str, Any]
) -> list[str]:
    """The methods of ``config`` whose records ``source`` may lend; raises
    :class:`ReuseRefused` when the two runs differ in anything that is not per method."""
    manifest = source / MANIFEST
    if not manifest.exists():
        raise ReuseRefused(f"{source} is not a run directory (no {MANIFEST})")
    old = json.loads(manifest.read_text())["config"]
    shared = sorted(k for k in set(old) | set(config) if k not in PER_METHOD)
    differ = [k for k in shared if old.get(k) != config.get(k) and not _grown(k, old, config)]
    if differ:
        raise ReuseRefused(
            f"{source} was run with another {', '.join(differ)}: its records "
            "do not answer this run's questions the same way"
        )
    # Package versions and the code are not refused: a method is reused by its resolved
    # settings, which a change of code may not show — so `eval` says the differences it
    # crossed (crossed_differences), and each copied record keeps where it came from.
    changes = [
        c
        for c in environment_differences(source, environment)
        if c.kind not in ("package", "source")
    ]
    # Another node-label rule changes SearChain's records only: the other methods may lend.
    relabelled = any(c.kind == "label_rule" for c in changes)
    changed = [c.words for c in changes if c.kind != "label_rule"]
    if changed:
        raise ReuseRefused(f"{source}: {'; '.join(changed)}")
    before, now = old.get("method_config", {}), config.get("method_config", {})
    return [
        m
        for m in config.get("methods", [])
        if m in before and before[m] == now.get(m) and not (relabelled and labels_nodes(m))
    ]


def labels_nodes(method: str) -> bool:
    """Whether ``method``'s records carry SearChain's node labels (SearChain and its
    variants)."""
    return plans_chains(method)


def _grown(key: str, old: dict[str, Any], new: dict[str, Any]) -> bool:
    """A larger ``limit`` with the same seed keeps every item the smaller one picked
    (``datasets.named.subsample``), so the old records answer a subset of the new items."""
    if key != "limit" or old.get("seed") != new.get("seed") or old.get("seed") is None:
        return False
    before, now = old.get("limit"), new.get("limit")
    return before is not None and (now is None or now >= before)


def reuse_records(
    source: str | Path, out: str | Path, config: dict[str, Any], environment: dict[str, Any]
) -> dict[str, int]:
    """Copy into the new run ``out`` (already prepared, still empty) the records of every
    method :func:`reusable_methods` allows; returns how many records each method got."""
    source, out = Path(source), Path(out)
    results = out / RESULTS
    if results.exists() and results.stat().st_size:
        raise ReuseRefused(f"{out} already holds results: --reuse-from only starts a new run")
    methods = reusable_methods(source, config, environment)
    counts = dict.fromkeys(methods, 0)
    lines = []
    for record in read_results(source, latest=False):
        if record.get("method") in counts:
            counts[record["method"]] += 1
            lines.append(json.dumps({**record, "reused_from": str(source)}) + "\n")
    with results.open("a", encoding="utf-8") as f:
        f.writelines(lines)
    return counts


def crossed_differences(source: str | Path, environment: dict[str, Any]) -> list[str]:
    """The differences of package versions and code between ``source`` and this run that
    reuse does not refuse: said to the user beside what was reused."""
    return [
        c.words
        for c in environment_differences(source, environment)
        if c.kind in ("package", "source")
    ]
