"""A confidence calibrator: one file's logistic map from a trace's signals to the probability
that its answer is right, and everything said about it — which answers it maps, its
certification, and the words a person reads.

A calibrator file is what ``searchain calibrate`` wrote (``eval/calibrate.fit_calibrator``),
shipped in the package (``data/calibrator-*.json``) or fit by the user. Files fit by older
versions lack the fields added since; :meth:`Calibrator.from_dict` reads every one of them,
and each field says once what its absence means. :meth:`Calibrator.to_dict` writes the file
as the fitter does (key for key, in its order), so a loaded file dumps to the same bytes.

A calibrator maps an answer only if it was fit on exactly the answer's configuration
(``configuration.py``; for one fit on several corpora pooled, the answer's is one of them)
and beat the base rate (:meth:`Calibrator.applies_to`); elsewhere an
answer's confidence is an uncalibrated score, and these are the words that say why.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from searchain.paths import cache_root
from searchain.scoring.confidence import maxprob
from searchain.scoring.confidence.certification import Certificate, certify
from searchain.scoring.confidence.configuration import alike_but_the_corpus, differences

UNCALIBRATED = (
    "uncalibrated score: no calibrator was fit for {method} on {model}; `searchain calibrate` "
    "fits one from an evaluation run"
)
# Each costly signal, and the check giving it (a calibrator fit with a check is named for it).
CHECK_SIGNALS = {
    "answer_supported": "nli",
    "answer_agreement": "consistency",
    "answer_logprob": "likelihood",
    maxprob.SIGNAL: maxprob.KEY,  # not run after the answer: read from the writing call
}
# The file's keys whose field is named otherwise ("probability" is the method mapping signals).
_KEY_OF = {"beats_base_rate": "probability"}
# What an answer's confidence keeps of its calibrator (where the file has it).
PROVENANCE = ("name", "version", "method", "model", "fit_on", "probability")


@dataclass(frozen=True, kw_only=True)
class Calibrator:
    """One calibrator file, its fields in the order the fitter writes them. The map itself
    (features, weights, bias, standardisation) is in every file; every other field is None
    where the file was written before it existed."""

    kind: str | None = None  # "logistic", the only kind
    version: int | None = None  # None: a file made by hand; an answer's provenance omits it
    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    means: tuple[float, ...]
    scales: tuple[float, ...]
    l2: float | None = None  # None: fit before the penalty was recorded; read as 0
    # None: a file made by hand (its notes then say "None", as they always did)
    name: str | None = None
    method: str | None = None
    model: str | None = None
    # Whether its cross-validated log-loss beat the base rate's ("probability" in the file).
    # None: fit before that was checked, shown as a probability as it was then.
    beats_base_rate: bool | None = None
    fit_on: dict[str, Any] | None = None  # its runs and items (None: the file does not say)
    # Written only where there was something to say: fit answers a check could not measure,
    # and whether the evidence step's signals were read.
    imputed_at_mean: dict[str, int] | None = None
    features_chosen_by: dict[str, Any] | None = None
    l2_chosen_by: dict[str, Any] | None = None  # None: fit before the penalty was chosen
    signal_auroc: dict[str, float | None] | None = None  # None: fit before it was recorded
    # The fit items' out-of-fold [p, right] (None: fit before certification, which then
    # starts its sequence with no fit item's score) and their hashes.
    calibration: list[list[float]] | None = None
    fit_items: list[str] | None = None
    # Its certification record (``certification.certification_record``). None: fit before
    # certification; one without "configuration": fit before configurations were recorded.
    certification: dict[str, Any] | None = None
    # A documentation family's verdict on mapping answers over other documentation indexes
    # (``transfer.transfer_record``: whether it ranked its certification items better than
    # the uncalibrated score). None: the mapping is never applied beyond its configuration.
    transfer: dict[str, Any] | None = None
    # Keys the fitter does not write (a script's notes, as "identity_widened"), kept as they are.
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibrator:
        """A calibrator from a file's JSON, of any version (a ``KeyError`` without the map)."""
        known = {f.name: _KEY_OF.get(f.name, f.name) for f in fields(cls) if f.name != "extra"}
        values = {name: data.get(key) for name, key in known.items()}
        for name in ("features", "weights", "means", "scales"):
            values[name] = tuple(data[name])
        values["bias"] = data["bias"]
        extra = {k: v for k, v in data.items() if k not in known.values()}
        return cls(**values, extra=extra)

    @classmethod
    def load(cls, path: str | Path) -> Calibrator:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def to_dict(self) -> dict[str, Any]:
        """The file's JSON as the fitter writes it: its keys in its order, the ones an older
        file lacks left out, then the keys it does not write."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "extra" and value is not None:
                out[_KEY_OF.get(f.name, f.name)] = list(value) if type(value) is tuple else value
        return {**out, **self.extra}

    @property
    def shown_as_probability(self) -> bool:
        return self.beats_base_rate is not False

    @property
    def fit_configuration(self) -> dict[str, Any] | None:
        """The configuration it was fit on (None: fit before they were recorded)."""
        return (self.certification or {}).get("configuration")

    def differences_from(self, identity: dict[str, Any]) -> list[str] | None:
        """Where the answer's configuration (``identity``) is not the one it was fit on, in
        words ([]: the same); None for a calibrator fit before configurations were recorded
        (it maps by its name alone)."""
        fit = self.fit_configuration
        return None if fit is None else differences(fit, identity)

    def why_not_probability(self) -> str:
        """Why its values are not shown as probabilities ("" when they are): on its fit
        items, its signals predicted no better than the share right — which is then the one
        measured figure of how far to trust such an answer, so it is said too."""
        if self.shown_as_probability:
            return ""
        chosen = self.l2_chosen_by or {}
        loss = (chosen.get("cv_log_loss") or {}).get(f"{self.l2 or 0:g}")
        bar = chosen.get("base_rate_log_loss")
        return (
            f"uncalibrated score: the calibrator fit for {self.method} on "
            f"{self.model} predicts no better than the share right in "
            f"cross-validation (log-loss {loss} against {bar}), so it is not shown as a "
            f"probability{share_right(self.fit_on or {})}"
        )

    def applies_to(self, identity: dict[str, Any]) -> tuple[bool, str]:
        """Whether it maps an answer of configuration ``identity`` to a probability, and why
        not in words ("" when it does): fit on another configuration, or no better than the
        base rate. One fit before configurations were recorded maps by its name alone."""
        said = self.differences_from(identity)
        if said is None:
            return True, ""
        why = self.why_not_probability() if not said else self.fit_elsewhere(said)
        return not why, why

    def fit_elsewhere(self, said: list[str]) -> str:
        return (
            f"uncalibrated score: the calibrator for {self.method} on "
            f"{self.model} was fit on another configuration ({'; '.join(said)}); "
            "`searchain calibrate` on a few dozen labelled questions of this configuration fits one"
        )

    def contributions(self, found: dict[str, float]) -> dict[str, float]:
        """Each measured signal's term in its log-odds (a signal not measured is taken at its
        mean: no term)."""
        out = {}
        for name, weight, mean, scale in zip(
            self.features, self.weights, self.means, self.scales, strict=True
        ):
            if name in found:
                out[name] = float(weight) * (found[name] - mean) / scale
        return out

    def probability(self, found: dict[str, float]) -> float:
        """Its probability for these signals (missing ones at their mean; a signal that is NaN
        or infinite counts as missing: clipped, a NaN log-odds would read as certainty)."""
        found = {name: v for name, v in found.items() if math.isfinite(v)}
        z = float(self.bias) + sum(self.contributions(found).values())
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))

    def explain(self, found: dict[str, float]) -> str:
        """What it could not weigh, in words: signals it was not fit on (a costly check run
        for nothing) and signals it needs that the trace lacks (taken at their mean)."""
        features = set(self.features)
        unused = sorted(k for k in found if k in CHECK_SIGNALS and k not in features)
        missing = sorted(features - set(found))
        said = []
        if unused:
            said.append(f"the calibrator was fit without {', '.join(unused)}: shown, not used")
        if missing:
            said.append(f"{', '.join(missing)} not measured: taken at the calibration items' mean")
        return "; ".join(said)

    def provenance(self) -> dict[str, Any]:
        """What an answer's confidence keeps of it: name, version, method, model, what it was
        fit on and whether it beat the base rate, where the file says."""
        shown = {_KEY_OF.get(f.name, f.name): getattr(self, f.name) for f in fields(self)}
        return {k: shown[k] for k in PROVENANCE if shown[k] is not None}

    @property
    def certification_items(self) -> list[list[Any]]:
        """Its certification items' [hash, score, right] ([]: fit before certification)."""
        return list((self.certification or {}).get("items") or [])

    @property
    def lowest_certificate(self) -> Certificate | None:
        """The certificate at the lowest risk its items certify (None: none, or fit before
        certification)."""
        at = (self.certification or {}).get("at_lowest_risk")
        return None if not at else Certificate(**{**at, "reason": at.get("reason") or ""})

    def certificate(self, max_risk: float, delta: float) -> Certificate:
        """The threshold its certification items certify at ``max_risk`` and δ."""
        items = self.certification_items
        if not items:
            return Certificate(
                None,
                max_risk,
                delta,
                0,
                reason=f"the calibrator {self.name} holds no certification items "
                "(fit before certification: `searchain calibrate` refits it)",
            )
        scores = [float(s) for _, s, _ in items]
        right = [bool(ok) for _, _, ok in items]
        fit = [(float(p), bool(ok)) for p, ok in self.calibration or []]
        return certify(scores, right, fit, max_risk, delta)


def share_right(fit_on: dict[str, Any]) -> str:
    """The share right on the calibration items, as a note's last clause ("; answers of
    the configuration it was fit on were right in 94 of its 240 calibration items (39%)"):
    the calibrator's configuration, which a note may show beside an answer of another; ""
    where the file does not say."""
    items, right = fit_on.get("items"), fit_on.get("right")
    if not items or right is None:
        return ""
    return (
        f"; answers of the configuration it was fit on were right in {right} of its {items} "
        f"calibration items ({right / items:.0%})"
    )


def calibrator_variant(method: str, checks: tuple[str, ...]) -> str:
    """The calibrator's method name for answers with these checks: ``searchain+nli``."""
    return method + "".join(f"+{c}" for c in checks)


def calibrator_name(method: str, model: str) -> str:
    return f"calibrator-{method}--{model}.json"


def user_calibrators() -> Path:
    """Where ``searchain calibrate`` puts the calibrators it fits (found before shipped ones)."""
    return cache_root() / "calibrators"


def shipped_calibrator(method: str, model: str) -> Calibrator | None:
    """The calibrator for ``method`` on ``model``: the user's own (``searchain calibrate``),
    else the one shipped in the package (``data/calibrator-*.json``), else None. A user's file
    is read again when it changes (a running ``serve`` uses a calibrator fitted beside it)."""
    return calibrator_named(f"{method}--{model}")


def calibrator_named(name: str) -> Calibrator | None:
    """The calibrator whose name is ``name`` (``searchain--<model>``, or a family's
    ``searchain--<model>--docs``): the user's file, else the package's, else None."""
    name = f"calibrator-{name}.json"
    mine = user_calibrators() / name
    try:
        stat = mine.stat()
    except FileNotFoundError:
        return _packaged_calibrator(name)
    return _read_calibrator(str(mine), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)  # bounded: each rewrite of a file is a new key
def _read_calibrator(path: str, mtime_ns: int, size: int) -> Calibrator:
    """One version of a user's calibrator file (its path, modification time and size)."""
    return Calibrator.load(path)


@cache
def _packaged_calibrator(name: str) -> Calibrator | None:
    path = resources.files("searchain.data").joinpath(name)
    return Calibrator.from_dict(json.loads(path.read_text("utf-8"))) if path.is_file() else None


def forget_calibrators() -> None:
    """Read every calibrator afresh (a test that swaps the package's files)."""
    _read_calibrator.cache_clear()
    _packaged_calibrator.cache_clear()
    _packaged_names.cache_clear()


def find_calibrator(
    method: str, checks: tuple[str, ...], model: str, identity: dict[str, Any] | None = None
) -> Calibrator | None:
    """The calibrator for answers of exactly ``method`` with these checks on ``model``
    (``searchain+likelihood``), else the method's own (a check run after the answer leaves
    its probability valid: the check's signal is shown, not used); None without one. With
    the answer's configuration (``identity``), a variant fit on another configuration gives
    way to the method's own where that one was fit on the answer's (after a refit of the
    method alone). An ablation is a method of its own: it never borrows SearChain's."""
    found = [
        c
        for c in (
            shipped_calibrator(calibrator_variant(method, checks), model),
            shipped_calibrator(method, model),
        )
        if c is not None
    ]
    if identity is None:
        return (found or [None])[0]
    family = list(family_calibrators(method, model))
    # a family file maps only answers of the configuration it names (none named: none)
    fits = [c for c in found if not c.differences_from(identity)]
    fits += [c for c in family if c.differences_from(identity) == []]
    if fits:
        return fits[0]
    # none fits: the nearest, so the note names the fewest differences (still not mapped)
    nearest = sorted(found + family, key=lambda c: len(c.differences_from(identity) or ()) or 99)
    return (nearest or [None])[0]


def transfer_family(method: str, model: str, identity: dict[str, Any]) -> Calibrator | None:
    """The first of the method's families whose file says its mapping transfers
    (``transfer.applies``) and which was fit on ``identity`` in every field but the corpus:
    for an answer over documents, its mapping is then a labelled transfer score."""
    for calibrator in family_calibrators(method, model):
        fit = calibrator.fit_configuration
        if fit is None or not (calibrator.transfer or {}).get("applies"):
            continue
        if alike_but_the_corpus(fit, identity):
            return calibrator
    return None


def family_calibrators(method: str, model: str) -> Iterator[Calibrator]:
    """The method's calibrators fit on other configurations than its own file's
    (``calibrator-searchain--<model>--docs.json``: documentation questions), the user's
    before the package's; one maps an answer only where it was fit on the answer's
    configuration (:func:`find_calibrator`)."""
    pattern = calibrator_name(method, model).removesuffix(".json") + "--*.json"
    seen: set[str] = set()
    for path in sorted(user_calibrators().glob(pattern)):
        seen.add(path.name)
        stat = path.stat()
        found = _read_calibrator(str(path), stat.st_mtime_ns, stat.st_size)
        if _named_as_its_file(found, path.name):
            yield found
    for name in _packaged_names(pattern):
        if name not in seen:
            found = _packaged_calibrator(name)
            if found is not None and _named_as_its_file(found, name):
                yield found


def _named_as_its_file(calibrator: Calibrator, file_name: str) -> bool:
    """A family file counts only if its name is its file's (``--max-risk`` finds the
    certificate by the name; a copy or backup under another file name is not a calibrator)."""
    return file_name == f"calibrator-{calibrator.name}.json"


@cache
def _packaged_names(pattern: str) -> tuple[str, ...]:
    names = [e.name for e in resources.files("searchain.data").iterdir()]
    return tuple(sorted(n for n in names if fnmatch.fnmatch(n, pattern)))
