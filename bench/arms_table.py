"""Arms from several runs of the same items, side by side: each arm's cover-EM with its 95 %
bootstrap interval and its paired difference against one arm (on the items both answered),
with items won and lost. An arm is a method's records in a run directory, so a method's
variants that were run into separate directories (an ablation, the paper's recorded run) are
compared on the same items as one table.

    .venv/bin/python -m bench.arms_table --against retrieve-read \\
        default=results/quality/qwen2.5-coder-1.5b/hotpotqa-100-evidence:searchain \\
        retrieve-read=results/quality/qwen2.5-coder-1.5b/hotpotqa-100-evidence:retrieve-read \\
        ablation=results/quality/qwen2.5-coder-1.5b/hotpotqa-100-evidence-question:searchain

Issue 50's HotpotQA-100 and MuSiQue-100 tables (docs/results.md) were printed by it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from searchain.eval.bootstrap import bootstrap_ci
from searchain.eval.compare import item_scores, paired_difference
from searchain.eval.runner import read_results


def arm_scores(spec: str, metric: str) -> tuple[str, dict[str, float]]:
    """``LABEL=RUN_DIR:METHOD`` → the label and the method's per-item scores in that run."""
    label, sep, where = spec.partition("=")
    run, colon, method = where.rpartition(":")
    if not sep or not colon or not label:
        raise SystemExit(f"write an arm as LABEL=RUN_DIR:METHOD, not {spec!r}")
    records = read_results(Path(run))
    scores = item_scores([r for r in records if r.get("method") == method], metric)
    if method not in scores:
        raise SystemExit(f"{run} holds no record of {method}")
    return label, scores[method]


def table(arms: dict[str, dict[str, float]], against: str, metric: str) -> list[str]:
    lines = [
        f"| arm | items | {metric} % (95 % CI) | Δ against {against} (paired, 95 % CI) "
        "| won / lost |",
        "|---|---|---|---|---|",
    ]
    starred = False
    for label, scores in arms.items():
        values = list(scores.values())
        mean, lo, hi = bootstrap_ci(values)
        cells = [label, str(len(values)), f"{100 * mean:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"]
        diff = None if label == against else paired_difference(arms, label, against, metric)
        if diff is None:
            cells += ["", ""]
        else:
            star = " *" if diff.significant else ""
            starred = starred or diff.significant
            cells += [f"{diff} on {diff.items}{star}", f"{diff.wins} / {diff.losses}"]
        lines.append("| " + " | ".join(cells) + " |")
    # The mark is explained only where a row carries it (a table without one said it too).
    return [*lines, "", "* the paired interval excludes 0."] if starred else lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("arms", nargs="+", help="LABEL=RUN_DIR:METHOD")
    p.add_argument("--against", required=True, help="the arm every other is paired with")
    p.add_argument("--metric", default="cover_em")
    args = p.parse_args()
    arms = dict(arm_scores(a, args.metric) for a in args.arms)
    if args.against not in arms:
        raise SystemExit(f"--against {args.against}: no such arm ({', '.join(arms)})")
    print("\n".join(table(arms, args.against, args.metric)))


if __name__ == "__main__":
    main()
