"""What an evaluation runs, as a small picklable value: which methods, on which LLM and
retriever. ``build()`` turns it into the callables the runner calls; a Ray worker receives
the spec (not a loaded model) and builds its own copy once."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from searchain.types import Trace

Runner = Callable[[str], Trace]


@dataclass
class MethodsSpec:
    names: tuple[str, ...]
    llm: str = "local"
    model: str | None = None
    base_url: str | None = None
    api: str = "completions"
    cache: bool = True
    model_path: str | None = None
    retriever: str = "bm25"
    index: str | None = None
    dense_index: str | None = None
    k: int | None = None  # passages per query (None: each method's own default)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # per method, by name
    threads: int | None = None

    def key(self) -> str:
        """A stable identity (workers cache what they built under it)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    def build(self) -> dict[str, Runner]:
        from searchain.methods.base import traced

        return {name: traced(m) for name, m in self.build_methods().items()}

    def build_methods(self) -> dict[str, Any]:
        from searchain.llm import make_llm
        from searchain.methods.registry import build_method
        from searchain.retrieval.factory import open_retriever

        client = make_llm(
            self.llm,
            model=self.model,
            base_url=self.base_url,
            api=self.api,
            cache=self.cache,
            model_path=self.model_path,
            n_threads=self.threads,
        )
        retriever = open_retriever(self.retriever, index=self.index, dense_index=self.dense_index)
        out = {}
        for name in self.names:
            options = self.options.get(name, {})
            out[name] = build_method(name, client, retriever, k=self.k, **options)  # type: ignore[arg-type]
        return out


def describe(method: Any) -> dict[str, Any]:
    """A method's effective configuration, for the run manifest: its class and its settings
    (the config dataclass of SearChain, REBEL and Think&Cite, or a baseline's plain
    attributes)."""
    out: dict[str, Any] = {"name": method.name, "class": type(method).__name__}
    config = getattr(method, "config", None)
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        # A setting added later is recorded only where it differs from what the code did
        # before it existed (its field's metadata "before"): a run made before it was added
        # resumes, a run that sets it otherwise is a different configuration.
        values = dataclasses.asdict(config)
        inert = config.inert_settings() if hasattr(config, "inert_settings") else set()
        for f in dataclasses.fields(config):
            if "before" in f.metadata and (
                values[f.name] == f.metadata["before"] or f.name in inert
            ):
                del values[f.name]
        out.update(values)
        if isinstance(getattr(method, "tool_list", None), str):  # REBEL: what its tools are
            out["tool_list"] = method.tool_list
        if hasattr(method, "manifest_extra"):  # Think&Cite: the models its reward compares
            out.update(method.manifest_extra())
    else:
        out.update(
            {
                k: v
                for k, v in vars(method).items()
                if not k.startswith("_") and isinstance(v, str | int | float | bool)
            }
        )
    for part in ("retriever", "reader"):
        obj = getattr(method, part, None)
        if obj is not None:
            out[part] = type(obj).__name__
    return json.loads(json.dumps(out, default=str))  # paths, enums...: as text
