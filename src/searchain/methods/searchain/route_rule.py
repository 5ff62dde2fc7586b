"""The words of SearChain's route settings: the routes and the triggers ``chain_when`` names.

Apart from ``route.py`` (which takes the route) because the config checks ``chain_when``
against them, and the route itself needs the config: one file for both would be a circle.
"""

from __future__ import annotations

ROUTES = ("chain", "read-first")
TRIGGERS = ("two-parts", "no-answer", "unstated", "uncited", "reader-disagrees", "always")


def parse_triggers(text: str) -> tuple[str, ...]:
    """``chain_when`` as triggers ("two-parts,unstated"); an unknown one is refused by name."""
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = [t for t in names if t not in TRIGGERS]
    if unknown or not names:
        raise ValueError(
            f"chain_when: unknown trigger {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(TRIGGERS)}"
        )
    return names
