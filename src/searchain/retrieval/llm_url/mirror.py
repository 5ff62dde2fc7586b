"""An offline Wikipedia mirror: a corpus served as Wikipedia-style HTML at ``/wiki/<Title>``.

LLM-URL fetches the pages a model names; without internet (tests, benchmarks, evaluations)
this server stands in for en.wikipedia.org with real HTTP: documents grouped by title, page
chrome to strip (menus, search box, edit links, footnote marks, navigation boxes, footer),
``301`` redirects from other spellings of a title (``_`` or spaces, case) to the canonical
URL, and ``404`` for titles it does not have. Bound to loopback unless told otherwise.

    searchain mirror serve                       # the bundled HotpotQA pool on 127.0.0.1:8765
    searchain ask "..." --method retrieve-read --retriever llm-url:http://127.0.0.1:8765
"""

from __future__ import annotations

import html
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from searchain.net.serving import base_url, refuse_remote, thread
from searchain.retrieval.llm_url.urls import canonical_title, title_to_path
from searchain.types import Passage

_CHROME_TOP = """<div id="mw-navigation"><nav id="mw-panel" role="navigation"><ul>
<li><a href="/wiki/Main_Page">Main page</a></li>
<li><a href="/wiki/Portal:Contents">Contents</a></li>
<li><a href="/wiki/Portal:Current_events">Current events</a></li>
<li><a href="/wiki/Special:Random">Random article</a></li>
<li><a href="/wiki/Wikipedia:About">About Wikipedia</a></li></ul></nav>
<div id="p-search"><form action="/w/index.php"><input name="search" placeholder="Search Wikipedia">
<button>Search</button></form></div></div>"""
_FOOTER = """<div id="catlinks" class="catlinks">Categories: Articles served by the searchain
mirror</div><footer id="footer"><ul><li>This page was last edited on 1 January 2024.</li>
<li>Text is available under the Creative Commons Attribution-ShareAlike License 4.0.</li>
<li><a href="/wiki/Wikipedia:Privacy_policy">Privacy policy</a></li></ul></footer>"""
_NAVBOX = """<div class="navbox" role="navigation"><table><tr><th>Related articles</th><td>\
<a href="/wiki/Main_Page">Main page</a> · <a href="/wiki/Help:Contents">Help</a></td></tr>\
</table></div>"""
_MISSING = "Wikipedia does not have an article with this exact name."


def render_page(title: str, paragraphs: list[str]) -> str:
    """A Wikipedia-like article page: the real text inside ``mw-parser-output``, with the
    chrome and in-article clutter a real page has around and inside it."""
    esc = html.escape
    body: list[str] = [
        '<div class="shortdescription nomobile noexcerpt">Article served by a mirror</div>',
        f'<div role="note" class="hatnote">For other uses, see {esc(title)} '
        "(disambiguation).</div>",
    ]
    for i, para in enumerate(paragraphs):
        for block in (b.strip() for b in para.split("\n\n")):
            if not block:
                continue
            if block.startswith("==") and block.endswith("=="):  # wikitext-style heading
                head = esc(block.strip("= "))
                body.append(
                    f'<h2><span class="mw-headline">{head}</span><span class="mw-editsection">'
                    '[<a href="#">edit</a>]</span></h2>'
                )
                continue
            text = "<br>".join(esc(line) for line in block.split("\n"))
            cite = f'<sup class="reference"><a href="#cite_note-{i}">[{i + 1}]</a></sup>'
            body.append(f"<p>{text}{cite}</p>")
    body.append(_NAVBOX)
    body.append('<div class="reflist"><ol class="references"><li>A reference.</li></ol></div>')
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)} - '
        "Wikipedia</title><style>body{font-family:sans-serif}</style><script>var wg={};"
        f"</script></head><body>{_CHROME_TOP}"
        f'<div id="content" class="mw-body"><h1 id="firstHeading">{esc(title)}</h1>'
        '<div id="bodyContent"><div id="siteSub">From Wikipedia, the free encyclopedia</div>'
        '<div id="mw-content-text"><div class="mw-parser-output">'
        + "\n".join(body)
        + f"</div></div></div></div>{_FOOTER}</body></html>"
    )


def _fold(title: str) -> str:
    return canonical_title(title).casefold()


class MirrorCorpus:
    """Documents grouped by canonical title; paragraphs of one title keep corpus order."""

    def __init__(self, docs: Iterable[Passage]) -> None:
        self.pages: dict[str, list[str]] = {}
        for doc in docs:
            title = canonical_title(doc.title or doc.id)
            self.pages.setdefault(title, []).append(doc.text)
        self._folded = {_fold(t): t for t in self.pages}

    @classmethod
    def from_files(cls, paths: Iterable[str | Path]) -> MirrorCorpus:
        from searchain.retrieval.corpus import read_documents

        def docs() -> Iterator[Passage]:
            for path in paths:
                yield from read_documents(path)

        return cls(docs())

    def __len__(self) -> int:
        return len(self.pages)

    def resolve(self, title: str) -> str | None:
        """The canonical title for a requested one (exact, else case/underscore-insensitive)."""
        t = canonical_title(title)
        return t if t in self.pages else self._folded.get(t.casefold())


class MirrorServer:
    """A running mirror (``with MirrorServer(corpus) as m: m.url``).

    ``delays`` (seconds per title) and ``padding`` (bytes of filler per title) make a page
    slow or oversized on purpose, for tests of timeouts and size limits; ``latency_s`` delays
    every response, to stand in for a distant server in benchmarks.
    """

    def __init__(
        self,
        corpus: MirrorCorpus,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        allow_remote: bool = False,
        delays: Mapping[str, float] | None = None,
        padding: Mapping[str, int] | None = None,
        latency_s: float = 0.0,
    ) -> None:
        refuse_remote(
            host, f"{host} is not a loopback address; pass allow_remote=True", allowed=allow_remote
        )
        self.corpus = corpus
        self.delays = {canonical_title(t): s for t, s in (delays or {}).items()}
        self.padding = {canonical_title(t): n for t, n in (padding or {}).items()}
        self.latency_s = latency_s
        self.requests: list[str] = []  # paths asked for, in order (tests read it)
        self.in_flight = self.max_in_flight = 0  # concurrent requests now / at most
        self._lock = threading.Lock()
        self._httpd = _Server((host, port), _handler(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return base_url(str(host), int(port))

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def start(self) -> MirrorServer:
        self._thread = thread(self._httpd.serve_forever, "searchain-mirror")
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> MirrorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up early (its timeout, its size cap) is normal here, not news.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def _handler(server: MirrorServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet by default
            pass

        def do_GET(self) -> None:
            with server._lock:
                server.requests.append(self.path)
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            self._counted = True
            try:
                self._get()
            finally:
                self._uncount()

        def _uncount(self) -> None:
            # Before the response is written: once the client has it, it may send the next
            # request while this thread is still finishing up, which is not concurrency.
            if self._counted:
                self._counted = False
                with server._lock:
                    server.in_flight -= 1

        def _get(self) -> None:
            if server.latency_s:
                time.sleep(server.latency_s)
            path = urlsplit(self.path).path
            if not path.startswith("/wiki/"):
                return self._send(404, "<h1>Not found</h1>")
            try:
                asked = unquote(path[len("/wiki/") :], errors="strict")
            except UnicodeDecodeError:
                return self._send(400, "<h1>Bad title</h1>")
            title = server.corpus.resolve(asked)
            if title is None:
                page = render_page(asked, [_MISSING])
                return self._send(404, page)
            if asked != title.replace(" ", "_") and asked != title:
                self._uncount()
                self.send_response(301)
                self.send_header("Location", f"/wiki/{title_to_path(title)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            delay = server.delays.get(title)
            if delay:
                time.sleep(delay)
            page = render_page(title, server.corpus.pages[title])
            pad = server.padding.get(title, 0)
            if pad:
                page = page.replace("</body>", f"<!-- {'x' * pad} --></body>")
            return self._send(200, page)

        def _send(self, status: int, page: str) -> None:
            data = page.encode("utf-8")
            self._uncount()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
