"""What the quality bench runs on each data set, beside the papers' numbers (``python -m
bench.quality``): a recipe names the data set, the methods that answer it, the metric, the
paper's method (paired differences are taken against it) and what the paper reported; how a
run is prepared and which extra arguments its evaluation takes. The tune and held-out
discipline over these sets is :mod:`searchain.eval.splits`."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from searchain.eval.datasets import load_dataset
from searchain.eval.taxonomy import Gold

MULTIHOP = (
    "direct-prompting",
    "cot",
    "retrieve-read",
    "self-ask",
    "react",
    "searchain",
    "searchain-no-ir",
    "searchain-no-verification",
    "searchain-no-completion",
)
PAPER_FOUR = ("direct-prompting", "retrieve-read", "self-ask", "searchain")
# SearChain Table 1 (gpt-3.5-turbo, cover-EM): the rows it has.
T1_HOTPOT = {
    "retrieve-read": 34.09,
    "self-ask": 40.05,
    "searchain-no-ir": 38.36,
    "searchain": 56.91,
    "searchain-no-verification": 46.11,
    "searchain-no-completion": 53.05,
}
T1_MUSIQUE = {
    "retrieve-read": 10.22,
    "self-ask": 14.28,
    "searchain-no-ir": 13.61,
    "searchain": 17.07,
    "searchain-no-verification": 14.70,
    "searchain-no-completion": 15.86,
}


@dataclass(frozen=True)
class Recipe:
    """One data set's comparison: what runs, how it is scored, what the paper reported."""

    dataset: str
    methods: tuple[str, ...]
    metric: str
    focus: str  # the paper's method: paired differences are taken against it
    paper: dict[str, float | str] = field(default_factory=dict)
    paper_source: str = ""
    corpus: str | None = None  # a file under shared/data to index (else the demo index)
    eval_args: tuple[str, ...] = ()
    # Retriever comparisons: one run per arm (name, extra eval args) under <set>/<arm>/, the
    # arms then compared as if they were methods. "{mirror}" starts the offline Wikipedia
    # mirror; "{wiki_index}" is --wiki-index (a BM25 index of Wikipedia you built).
    arms: tuple[tuple[str, tuple[str, ...]], ...] = ()
    also: tuple[str, ...] = ()  # more metrics to show, one column each
    # "cc-facts": the paper's 5 categories (limit/5 items each, seed 0) and, for the search
    # tool, a BM25 index of the data set's single-hop facts (scripts/rebel_cc_table.py);
    # "sqa-facts": a BM25 index of StrategyQA's annotated facts (bench.quality's
    # strategyqa_facts_index); "fever-pool": the claims whose evidence the demo index holds
    # (bench.quality's fever_in_pool)
    prepare: str | None = None
    # A larger sample of another set's run (same seed): its finished records are reused
    # (`searchain eval --reuse-from`), only the new items are answered.
    grow_from: str | None = None
    limit: int | None = None  # the items of a grown set (else --limit)
    # The metrics shown side by side, each with its CI and paired Δ to the focus method
    metrics: tuple[str, ...] = ("em", "f1", "cover_em")  # strict EM, token F1, cover-EM


ATTRIBUTION_ARMS = ("alce-vanilla", "thinkcite-1", "thinkcite-2", "thinkcite-3")


def _options(method: str, *settings: str) -> tuple[str, ...]:
    """``-O METHOD.KEY=VALUE`` for each setting, as ``searchain eval`` takes them."""
    return tuple(a for s in settings for a in ("-O", f"{method}.{s}"))


# retrieve-then-read with ALCE's citing prompt, every mark the model's (no post-hoc citations)
ALCE_VANILLA = _options("retrieve-read", "template=baselines/alce_vanilla", "post_cite=false")


def _thinkcite(iterations: int) -> tuple[str, ...]:
    """Think&Cite's MCTS at a budget a 2-core CPU affords (2 children, 1 reflection)."""
    return _options(
        "thinkcite", f"max_iterations={iterations}", "n_children=2", "max_reflections=1"
    )


LLM_URL_ALSO = (
    "doc_recall@1",
    "passage_recall@1",
    "passage_recall@10",
    "valid_url_share",
    "cover_em",
)
RECIPES: dict[str, Recipe] = {
    "hotpotqa": Recipe(
        "hotpotqa", MULTIHOP, "cover_em", "searchain", T1_HOTPOT, "SearChain Table 1, gpt-3.5-turbo"
    ),
    "musique": Recipe(
        "musique",
        MULTIHOP,
        "cover_em",
        "searchain",
        T1_MUSIQUE,
        "SearChain Table 1, gpt-3.5-turbo",
        corpus="musique/musique_train_corpus.json",
    ),
    "strategyqa": Recipe(
        "strategyqa",
        ("direct-prompting", "retrieve-read", "searchain"),
        "accuracy",
        "searchain",
        {"retrieve-read": 66.78, "searchain": 76.95},
        "SearChain Table 1 (cover-EM of the label)",
        prepare="sqa-facts",
    ),
    "fever": Recipe(
        "fever",
        ("direct-prompting", "retrieve-read", "searchain"),
        "accuracy",
        "searchain",
        {"retrieve-read": 78.25, "searchain": 81.15},
        "SearChain Table 1 (cover-EM of the label)",
        prepare="fever-pool",
    ),
    "compositional-celebrities": Recipe(
        "compositional-celebrities",
        ("direct-prompting", "self-ask", "rebel"),
        "cover_em",
        "rebel",
        {"rebel": "74.4 (59–94)", "direct-prompting": "55.6 (GPT-3, 16–95)"},
        "REBEL Table 1, text-davinci-003, human-judged, mean of its 5 categories",
        prepare="cc-facts",
    ),
    "llm-url": Recipe(
        "hotpotqa",
        ("bm25", "llm-url"),
        "doc_recall@10",
        "llm-url",
        {},
        "LLM-URL reports WebQ/NQ/TriviaQA; here the offline mirror of HotpotQA's pool",
        eval_args=("-k", "10"),
        arms=(
            ("bm25", ("--retriever", "bm25")),
            ("llm-url", ("--retriever", "llm-url:base={mirror},m=10")),
        ),
        also=LLM_URL_ALSO,
    ),
    "webq-llm-url": Recipe(
        "webq",
        ("bm25", "llm-url"),
        "doc_recall@10",
        "llm-url",
        {"llm-url": "zero-shot R@1 +20.4 % relative over the best baseline"},
        "LLM-URL §4, text-davinci-003, live Wikipedia",
        eval_args=("-k", "10"),
        arms=(("bm25", ("--index", "{wiki_index}")), ("llm-url", ("--retriever", "llm-url:m=10"))),
        also=LLM_URL_ALSO,
    ),
    # Issue 30: the papers' comparison on 100 items (a superset of the 50 above), four methods.
    "hotpotqa-100": Recipe(
        "hotpotqa",
        PAPER_FOUR,
        "cover_em",
        "searchain",
        T1_HOTPOT,
        "SearChain Table 1, gpt-3.5-turbo",
        grow_from="hotpotqa",
        limit=100,
    ),
    "musique-100": Recipe(
        "musique",
        PAPER_FOUR,
        "cover_em",
        "searchain",
        T1_MUSIQUE,
        "SearChain Table 1, gpt-3.5-turbo",
        corpus="musique/musique_train_corpus.json",
        grow_from="musique",
        limit=100,
    ),
    # Issue 30: Think&Cite's claim is better attribution at equal or better correctness. The
    # shared ELI5/QAMPARI files carry no passages, so it is measured where a corpus exists:
    # HotpotQA questions over the demo index, against retrieve-then-read with ALCE's citing
    # prompt (no post-hoc citations: every mark is the model's), and Think&Cite at three MCTS
    # budgets on the same items (seeded children: a longer search repeats a shorter one's
    # calls, served by the call cache). Citation recall/precision by the --nli judge (the
    # policy model itself: no NLI checkpoint is installed). The budget fits a 2-core CPU with
    # the 1.5B model: 2 children per expansion, 1 reflection, 1/2/3 iterations (the paper:
    # 3 children, 10 reflections, 30 iterations), 5 items (about 20 min an item, all arms).
    "hotpotqa-attribution": Recipe(
        "hotpotqa",
        ATTRIBUTION_ARMS,
        "citation_recall",
        "thinkcite-3",
        {
            "thinkcite-3": "higher citation recall and precision than vanilla RAG at equal or "
            "better correctness (ASQA/ELI5, 30 iterations)"
        },
        "Think&Cite Tables 1-2, GPT-4o",
        eval_args=("--nli", "llm"),
        arms=(
            ("alce-vanilla", ("--methods", "retrieve-read", *ALCE_VANILLA)),
            *((f"thinkcite-{n}", ("--methods", "thinkcite", *_thinkcite(n))) for n in (1, 2, 3)),
        ),
        metrics=("cover_em", "f1", "citation_recall", "citation_precision"),
        limit=5,
    ),
}


# prepare steps that write the recipe's own item file (the reported items are its subsample)
ITEM_FILES = ("cc-facts", "fever-pool")


def paper_pins(methods: str) -> list[str]:
    """``-O`` pins of the paper preset (``searchain-paper``, declared once in the method
    catalog) for each SearChain method of a run, but what an ablation fixes itself: the Table
    reproductions run the paper's SearChain under the name ``searchain`` (and its ablations
    under theirs), so the recorded runs, made when every default was the paper's, keep their
    method names, records and tables, and resume (``eval.same_run``: pins that leave what each
    method resolved to unchanged are the same run)."""
    from searchain.methods.catalog import resolve

    preset = resolve("searchain-paper")[1]
    pins = []
    for name in methods.split(","):
        record, fixed = resolve(name)
        if record.name == "searchain" and name != "searchain-paper":
            pins += [
                f"{name}.{k}={v if isinstance(v, str) else json.dumps(v)}"
                for k, v in preset.items()
                if k not in fixed
            ]
    return [a for pin in pins for a in ("-O", pin)]


def golds(recipe: Recipe) -> dict[str, Gold]:
    """What the taxonomy needs: answers, and the titles of the evidence in the searched
    corpus (StrategyQA's own facts, indexed under its term by bench.quality's
    strategyqa_facts_index)."""

    def titles(e) -> tuple[str, ...]:
        if recipe.prepare == "sqa-facts":
            return (e.meta["term"],)
        return tuple(p.get("title", "") for p in e.gold_passages)

    return {
        e.id: Gold(e.answers or ([e.label] if e.label else []), titles(e))
        for e in examples(recipe.dataset)
    }


@functools.cache
def examples(dataset: str) -> tuple:
    """A data set read once per process: the scorer and the taxonomy both need its golds."""
    return tuple(load_dataset(dataset))
