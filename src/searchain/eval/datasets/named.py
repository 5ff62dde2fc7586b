"""Named datasets (the files of the data directory), loading any dataset into
:class:`~searchain.eval.datasets.Example` records and deterministic subsampling."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import Example, unique_ids
from searchain.eval.datasets.detect import FORMATS, READERS, detect_dataset_format
from searchain.retrieval.corpus import corpus_fingerprint

DATA_ENV = "SEARCHAIN_DATA"


@dataclass(frozen=True, slots=True)
class _Named:
    path: str
    fmt: str
    task: str | None = None  # overrides the format's task
    labels: tuple[str, ...] | None = None  # keep only examples with these labels


# The SearChain paper evaluates FEVER as KILT does, SUPPORTS/REFUTES only: its prompt asks
# "(SUPPORTS or REFUTES)?", so paper_dev's NOT ENOUGH INFO third could never be right.
# `fever-nei` keeps them.
_FEVER_PAPER_LABELS = ("SUPPORTS", "REFUTES")


DATASETS: dict[str, _Named] = {
    "hotpotqa": _Named("hotpotqa/dev_subsampled.jsonl", "ircot"),
    "musique": _Named("musique/musique_train.json", "musique"),
    "strategyqa": _Named("strategyqa/strategyqa_dev.json", "strategyqa"),
    "fever": _Named("fever/paper_dev.jsonl", "fever", labels=_FEVER_PAPER_LABELS),
    "fever-nei": _Named("fever/paper_dev.jsonl", "fever"),
    "nq": _Named("nq/NQ-open.dev.jsonl", "qa"),
    "nq-efficientqa": _Named("nq/NQ-open.efficientqa.test.1.1.jsonl", "qa"),
    "webq": _Named("webq/webq-test.jsonl", "qa"),
    "webq-train": _Named("webq/webq-train.jsonl", "qa"),
    "compositional-celebrities": _Named(
        "compositional_celebrities/compositional_celebrities.json", "compositional-celebrities"
    ),
    "eli5": _Named("alce/eli5.json", "alce"),
    "qampari": _Named("alce/qampari.json", "alce"),
    "bamboogle": _Named("bamboogle/test.csv", "csv", task="multihop"),
}
_ALIASES = {
    "hotpot": "hotpotqa",
    "nq-open": "nq",
    "efficientqa": "nq-efficientqa",
    "webq-test": "webq",
    "webquestions": "webq",
    "compositional_celebrities": "compositional-celebrities",
    "cc": "compositional-celebrities",
    "alce-eli5": "eli5",
    "alce-qampari": "qampari",
}


def data_dir() -> Path:
    """``$SEARCHAIN_DATA``, else ``../shared/data`` next to the repository."""
    env = os.environ.get(DATA_ENV)
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[4]  # src/searchain/eval/datasets/named.py -> repo
    return repo.parent / "shared" / "data"


def _named(name: str) -> tuple[str, _Named] | None:
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    spec = DATASETS.get(key)
    return (key, spec) if spec is not None else None


def dataset_path(name_or_path: str | os.PathLike[str]) -> Path:
    """The file a dataset name stands for, or the path itself."""
    named = _named(str(name_or_path))
    if named is not None:
        path = data_dir() / named[1].path
        if not path.is_file():
            raise FileNotFoundError(
                f"dataset {named[0]!r}: {path} not found (set ${DATA_ENV} to the data directory)"
            )
        return path
    path = Path(name_or_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no dataset named {str(name_or_path)!r} and no such file; "
            f"named datasets: {', '.join(DATASETS)}"
        )
    return path


def dataset_fingerprint(name_or_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Identify a dataset's exact content: ``{"path", "size", "sha256"}`` (+ ``"name"``).

    A named dataset that keeps only some labels (``fever``: SUPPORTS/REFUTES) is another
    item set than its file: ``sha256`` then hashes the file's digest with the labels kept,
    ``file_sha256`` is the file's and ``labels`` the labels, so a run directory made before
    the filter (or with ``fever-nei``) is refused rather than resumed with other items."""
    fp = corpus_fingerprint(dataset_path(name_or_path))
    named = _named(str(name_or_path))
    if named is not None:
        fp["name"] = named[0]
        if named[1].labels is not None:
            fp["file_sha256"] = fp["sha256"]
            fp["labels"] = list(named[1].labels)
            kept = ",".join(named[1].labels)
            key = f"{fp['file_sha256']}\x00labels={kept}"
            fp["sha256"] = hashlib.sha256(key.encode()).hexdigest()
    return fp


def load_dataset(
    name_or_path: str | os.PathLike[str],
    *,
    limit: int | None = None,
    seed: int | None = 0,
    fmt: str | None = None,
    label_filter: bool = True,
) -> list[Example]:
    """Read a named dataset or a file into :class:`Example` records, in file order.

    ``limit`` keeps that many items: with a ``seed``, a seeded shuffle picks them (the same
    items on every machine and Python version, see :func:`subsample`) and they are returned
    in file order; ``seed=None`` takes the first ``limit``. A dataset name wins over a file
    of the same name in the working directory (write ``./nq`` for the file). ``fmt`` forces
    a format (one of :data:`FORMATS`) instead of detecting it. ``fever`` keeps the
    SUPPORTS/REFUTES claims (the paper's setting), ``fever-nei`` every claim;
    ``label_filter=False`` drops a named dataset's label filter (to read a run made before it).
    """
    named = _named(str(name_or_path))
    path = dataset_path(name_or_path)
    task = None
    if named is not None:
        fmt = fmt or named[1].fmt
        task = named[1].task
    fmt = fmt or detect_dataset_format(path)
    try:
        reader = READERS[fmt]
    except KeyError:
        raise ValueError(f"unknown dataset format {fmt!r}; expected one of {FORMATS}") from None
    examples = list(reader(path))
    if task is not None:
        for ex in examples:
            ex.task = task
    unique_ids(examples)  # before any filter: an id depends only on the file
    if label_filter and named is not None and named[1].labels is not None:
        examples = [ex for ex in examples if ex.label in named[1].labels]
    for ex in examples:
        ex.meta.setdefault("format", fmt)
        if named is not None:
            ex.meta.setdefault("dataset", named[0])
    return subsample(examples, limit, seed)


def subsample(examples: Sequence[Example], limit: int | None, seed: int | None) -> list[Example]:
    """``limit`` examples, deterministically, in their original order.

    ``seed=None``: the first ``limit``. Otherwise the examples are shuffled by the SHA-256 of
    ``(seed, position)`` — a seeded shuffle that, unlike :mod:`random`, is guaranteed to stay
    the same across Python versions — and the first ``limit`` of the shuffle are returned
    sorted back to file order. A larger ``limit`` with the same seed keeps every item a
    smaller one picked.
    """
    if limit is None:
        return list(examples)
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    if seed is None or limit >= len(examples):
        return list(examples[:limit])

    def key(i: int) -> bytes:
        return hashlib.sha256(f"{seed}\x00{i}".encode()).digest()

    chosen = sorted(sorted(range(len(examples)), key=key)[:limit])
    return [examples[i] for i in chosen]
