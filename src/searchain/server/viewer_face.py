"""The web viewer's face of the service: its page and files, and the evaluation runs it shows.

GET /v1/runs[/NAME[/items/ID]]   evaluation runs written by ``searchain eval``
GET /                            the viewer (static files in this package)
GET /static/...                  its scripts and styles

What a run's routes send passes through :func:`~searchain.server.public.public` (secrets
masked); a missing run or item is a 404 ``{"error": ...}``.
"""

# No "from __future__ import annotations": FastAPI reads the routes' Annotated parameters.

from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from searchain.server import models as m
from searchain.server.errors import ERRORS, NOT_FOUND, FaceError
from searchain.server.public import public
from searchain.server.runs import RunNotFound, RunStore

STATIC = Path(__file__).parent / "static"
# The viewer's own files only: model output is shown with textContent, and nothing loads
# from elsewhere (the page works offline).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)


def add_run_routes(app: FastAPI, runs: RunStore, auth: list[Any]) -> None:
    """GET /v1/runs[/NAME[/items/ID]]: evaluation runs written by ``searchain eval``."""

    @app.get("/v1/runs", response_model=m.RunsOut, responses=ERRORS, dependencies=auth)
    def list_runs() -> Any:
        return public({"runs": runs.list()})

    @app.get(
        "/v1/runs/{name}", response_model=m.RunDetailOut, responses=NOT_FOUND, dependencies=auth
    )
    def run_detail(
        name: str,
        failures: Annotated[
            bool, Query(description="Only failed items (error or 0 score)")
        ] = False,
        method: Annotated[str | None, Query(max_length=100)] = None,
        offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> Any:
        try:
            d = runs.detail(name, failures=failures, method=method, offset=offset, limit=limit)
        except RunNotFound:
            raise FaceError(404, f"no run named {name!r}", "not_found") from None
        return public(d)

    @app.get(
        "/v1/runs/{name}/items/{item_id:path}",
        response_model=m.ItemOut,
        responses=NOT_FOUND,
        dependencies=auth,
    )
    def run_item(
        name: str, item_id: str, method: Annotated[str | None, Query(max_length=100)] = None
    ) -> Any:
        try:
            return public(runs.item(name, item_id, method))
        except RunNotFound:
            why = f"no item {item_id!r} in run {name!r}"
            raise FaceError(404, why, "not_found") from None


def add_viewer_page(app: FastAPI) -> None:
    """The viewer's page at / and its files under /static."""

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=_page_headers())

    app.mount("/static", StaticFiles(directory=STATIC), name="static")


def _page_headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
