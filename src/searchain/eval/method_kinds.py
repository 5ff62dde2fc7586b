"""Which methods plan a Chain-of-Query, asked of the method catalog (not read off a name).

An evaluation's analyses, reuse and stamps of old runs handle SearChain's runs apart: its node
labels, its θ-adjacent settings, its paper's Tables 2 and 3. A method is one when the component
that builds it holds SearChain's settings (its ablations and presets are variants of it).
"""

from __future__ import annotations

from searchain.methods import catalog
from searchain.methods.component import MethodComponent
from searchain.methods.searchain.config import SearChainConfig


def chain_record(name: str) -> type[MethodComponent] | None:
    """The component that builds method ``name`` when it is a Chain-of-Query (None otherwise,
    and for a name not registered here: a method read from an old run's file)."""
    try:
        record, _ = catalog.resolve(name)
    except ValueError:
        return None
    return record if issubclass(record.config_class(), SearChainConfig) else None


def plans_chains(name: str) -> bool:
    """Whether method ``name`` plans a Chain-of-Query (SearChain, an ablation, a preset)."""
    return chain_record(name) is not None


def in_full(name: str) -> bool:
    """Whether ``name`` is a Chain-of-Query method as its component builds it, no setting fixed
    (SearChain itself, not an ablation or a preset)."""
    record = chain_record(name)
    return record is not None and name == record.name


def without_ir(name: str) -> str | None:
    """The method ``name`` is the ablation without IR of (the variant fixing ``use_ir``
    off), or None."""
    record = chain_record(name)
    if record is None or catalog.resolve(name)[1].get("use_ir") is not False:
        return None
    return record.name
