"""Citations a person can open: each cited passage as a readable page.

``GET /passages/{id}?cite=…`` shows the passage's title, its file and page, and the passage
marked in its surrounding text (the passages before and after it in the same file, for the
user's documents); a link opens the file itself (``GET /passage-file?id=…&cite=…``, served
from the indexed folder only) or, for a web page LLM-URL read, its address. The chat face's
annotations, MCP's answers and the viewer link here. On a service with a token the link
carries its HMAC signature (``server/cited.py``), so it opens in a browser without the bearer
header; an unsigned or mis-signed link gets 403 and learns nothing.

Everything shown is escaped text: documents and model output are hostile input. The page loads
nothing and runs nothing (its CSP); a served file is sandboxed (no scripts, an opaque origin).
"""

# No "from __future__ import annotations": FastAPI reads the routes' Annotated parameters.

import html
import mimetypes
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Query
from fastapi.responses import FileResponse, HTMLResponse

from searchain.server.cited import file_link, signed
from searchain.server.engine import Engine
from searchain.types import Passage

PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
FILE_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
MAX_FILE_BYTES = 200 * 1024 * 1024
AROUND = 2  # passages shown before and after the cited one
STYLE = (
    "body{font:16px/1.55 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
    "color:#222}.where{color:#555}.context p{white-space:pre-wrap}.near{color:#666}"
    "mark{background:#fff3a8;padding:.1em .2em}"
)
TYPES = {".md": "text/plain; charset=utf-8", ".txt": "text/plain; charset=utf-8"}


def add_citation_pages(app: FastAPI, engine: Engine, token: str | None) -> None:
    """The citation page and the file route (outside /v1/: a browser opens them)."""

    @app.get("/passages/{pid:path}", include_in_schema=False, response_model=None)
    def passage_page(
        pid: str, cite: Annotated[str | None, Query(max_length=64)] = None
    ) -> HTMLResponse:
        if not signed(token, pid, cite):
            return _page("Not a link of this service", "<p>This link is not signed.</p>", 403)
        found = engine.document_context(pid, AROUND)
        if found is not None:
            body = _body(found.passage, found.before, found.after, _file_link(pid, token))
            return _page(_title(found.passage), body)
        passage = engine.cited.get(pid)
        if passage is None:
            why = "<p>No passage with this id was cited by this service since it started.</p>"
            return _page("Passage not found", why, 404)
        return _page(_title(passage), _body(passage, [], [], _web_link(passage)))

    @app.get("/passage-file", include_in_schema=False, response_model=None)
    def passage_file(
        id: Annotated[str, Query(min_length=1, max_length=2000)],
        cite: Annotated[str | None, Query(max_length=64)] = None,
    ) -> Any:
        from searchain.retrieval.documents.context import source_file

        index = engine.document_index()
        found = engine.document_context(id, 0) if signed(token, id, cite) else None
        path = (found.passage.source or {}).get("path") if found is not None else None
        file = source_file(index, str(path)) if index is not None and path else None
        if file is None or file.stat().st_size > MAX_FILE_BYTES:
            return _page("File not available", "<p>This file is not served.</p>", 404)
        kind = TYPES.get(file.suffix.lower()) or mimetypes.guess_type(file.name)[0]
        headers = {"Content-Security-Policy": FILE_CSP, "X-Content-Type-Options": "nosniff"}
        return FileResponse(file, media_type=kind or "application/octet-stream", headers=headers)


def _title(passage: Passage) -> str:
    return passage.title or passage.locator() or passage.id


def _body(passage: Passage, before: list[Passage], after: list[Passage], link: str) -> str:
    src = passage.source or {}
    where = [str(src["path"])] if src.get("path") else []
    if src.get("page"):
        where.append(f"page {src['page']}")
    if src.get("heading"):
        where.append(" › ".join(map(str, src["heading"])))
    near = "".join(f'<p class="near">{html.escape(p.text)}</p>' for p in before)
    after_text = "".join(f'<p class="near">{html.escape(p.text)}</p>' for p in after)
    cited = f'<p><mark id="cited">{html.escape(passage.text)}</mark></p>'
    return (
        f'<p class="where">{html.escape(" · ".join(where) or "passage " + passage.id)}</p>'
        f'<section class="context">{near}{cited}{after_text}</section>{link}'
    )


def _file_link(pid: str, token: str | None) -> str:
    return f'<p><a href="{html.escape(file_link(pid, token))}">Open the file</a></p>'


def _web_link(passage: Passage) -> str:
    """A web page's address (LLM-URL's passages), only when it is http(s)."""
    url = str((passage.source or {}).get("url") or "")
    if urlsplit(url).scheme not in ("http", "https"):
        return ""
    return f'<p><a href="{html.escape(url)}" rel="noreferrer">Open the page</a></p>'


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)} · searchain</title><style>{STYLE}</style></head>"
        f"<body><main><h1>{html.escape(title)}</h1>{body}</main></body></html>"
    )
    headers = {"Content-Security-Policy": PAGE_CSP, "X-Content-Type-Options": "nosniff"}
    return HTMLResponse(text, status_code=status, headers=headers)
