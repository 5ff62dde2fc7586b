"""What an evaluation runs, as a small picklable value: which methods, on which LLM and
retriever (one :class:`~searchain.methods.assembly.Spec`). ``build()`` turns it into the
callables the runner calls, with the one assembler; a Ray worker receives the value (not a
loaded model) and builds its own copy once. :func:`describe` is what a run's manifest records
of each built method."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from searchain.methods.assembly import Spec
from searchain.types import Trace

Runner = Callable[[str], Trace]


@dataclass(frozen=True)
class MethodsSpec:
    """The methods of one evaluation: their names, the spec that names the model and the
    retriever they share (its ``method`` unused), and each one's settings by name."""

    names: tuple[str, ...]
    spec: Spec = field(default_factory=Spec)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def key(self) -> str:
        """A stable identity (workers cache what they built under it)."""
        options = {n: dict(self.options.get(n, {})) for n in self.names}
        return json.dumps([list(self.names), self.spec.to_dict(), options], sort_keys=True)

    def for_method(self, name: str) -> Spec:
        return dataclasses.replace(self.spec, method=name, options=self.options.get(name, {}))

    def build(self) -> dict[str, Runner]:
        """Each method's runner, built by the one assembler over one LLM and one retriever."""
        from searchain.methods.assembly import assemble, open_llm, open_retriever

        llm = open_llm(self.spec)
        retriever = open_retriever(self.spec, llm)
        return {n: assemble(self.for_method(n), llm=llm, retriever=retriever) for n in self.names}


def describe(method: Any) -> dict[str, Any]:
    """A method's effective configuration, for the run manifest: its name and class, its
    config's settings (every method holds its settings dataclass as ``config``), what the
    method derives from them (``manifest_extra()``: a template, REBEL's tool list,
    Think&Cite's reward pair) and the kinds of its retriever and reader."""
    out: dict[str, Any] = {"name": method.name, "class": type(method).__name__}
    out.update(config_values(method.config))
    if hasattr(method, "manifest_extra"):
        out.update(method.manifest_extra())
    for part in ("retriever", "reader"):
        obj = getattr(method, part, None)
        if obj is not None:
            out[part] = type(obj).__name__
    return json.loads(json.dumps(out, default=str))  # paths, enums...: as text


def config_values(config: Any) -> dict[str, Any]:
    """A settings dataclass's values. A setting added later is recorded only where it
    differs from what the code did before it existed (its field's metadata "before"): a run
    made before it was added resumes, a run that sets it otherwise is a different
    configuration."""
    values = dataclasses.asdict(config)
    inert = config.inert_settings() if hasattr(config, "inert_settings") else set()
    for f in dataclasses.fields(config):
        if "before" in f.metadata and (values[f.name] == f.metadata["before"] or f.name in inert):
            del values[f.name]
    return values
