"""Which items of a data set a run may answer (issues 50 and 51): the reported runs answer
seed-0 subsamples; the frozen held-out items (``splits/`` next to the data folder,
``../shared/splits``) are answered once, after everything is chosen; tuning answers only the
rest, the tune split, so prompt and threshold work never sees a reported or held-out item."""

from __future__ import annotations

import json
from pathlib import Path

from searchain.eval.datasets import dataset_path, load_dataset
from searchain.eval.datasets.named import data_dir
from searchain.eval.recipes import ITEM_FILES, RECIPES, Recipe

# The frozen held-out items' file per data set: never answered before their one final scoring.
HELD_OUT_FILES = {"hotpotqa": "hotpotqa-fresh-heldout-160.txt"}


class SplitError(ValueError):
    """A split that cannot be made without risking a reported or held-out item."""


def held_out_path(dataset: str) -> Path | None:
    """The file of ``dataset``'s frozen held-out ids (None: the set has none)."""
    name = HELD_OUT_FILES.get(dataset)
    return None if name is None else data_dir().parent / "splits" / name


def held_out_ids(dataset: str) -> set[str]:
    """The frozen held-out ids of ``dataset`` (none for a set without a frozen split)."""
    path = held_out_path(dataset)
    if path is None:
        return set()
    if not path.is_file():  # a tune split that might hold held-out items is no tune split
        raise SplitError(f"{dataset}: the frozen held-out split {path} is missing")
    return {ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()}


def reported_ids(dataset: str, limit: int) -> set[str]:
    """Every item a reported run of ``dataset`` answers: the seed-0 subsample of ``limit`` and
    of each recipe's own size on that data set (HotpotQA-100 grows the 50; a larger seed-0
    subsample keeps every item of a smaller one)."""
    sizes = {limit, *(r.limit for r in RECIPES.values() if r.dataset == dataset and r.limit)}
    return {e.id for e in load_dataset(dataset, limit=max(sizes), seed=0)}


def tune_split(recipe: Recipe, limit: int, root: Path) -> Path:
    """Write ``root/splits/<dataset>-tune-<limit>``: the data set's items outside every
    reported subsample and its frozen held-out split, in the file's own format (JSON Lines or
    a top-level JSON list), so ``searchain eval`` reads them as usual. (Until issue 50 it left
    out only the reported 50: 4 of the first 20 tune items and 7 of the first 40 were
    HotpotQA-100 items.)"""
    if recipe.prepare in ITEM_FILES:  # its reported items are drawn from another file
        raise SplitError(
            f"{recipe.dataset}: no tune split for a recipe whose items are a prepared subset "
            f"({recipe.prepare}) yet"
        )
    src = dataset_path(recipe.dataset)
    excluded = reported_ids(recipe.dataset, limit) | held_out_ids(recipe.dataset)
    everything = load_dataset(recipe.dataset)
    keep = [i for i, e in enumerate(everything) if e.id not in excluded]
    out = root / "splits" / f"{recipe.dataset}-tune-{limit}{src.suffix}"
    text = src.read_text(encoding="utf-8")
    if src.suffix == ".jsonl":
        lines = [ln for ln in text.splitlines() if ln.strip()]
        body = "".join(lines[i] + "\n" for i in keep)
    elif isinstance(records := json.loads(text), list):
        body = json.dumps([records[i] for i in keep])
    else:
        raise SplitError(f"{recipe.dataset}: no tune split for this file format ({src.name})")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body, encoding="utf-8")
    return out
