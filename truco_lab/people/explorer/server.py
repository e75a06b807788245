"""The explorer as a local web app: the page, its one ES module, and the JSON endpoints of
:mod:`.api`. Binds 127.0.0.1 unless told otherwise; serves only its own static files and answers
only from the run folders it was given (no parameter names a path)."""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from truco_lab.lab.browse import BrowseError
from truco_lab.people.explorer.api import ExplorerAPI

STATIC = Path(__file__).parent / "static"
FILES = {"/": ("index.html", "text/html; charset=utf-8"),
         "/table": ("table.html", "text/html; charset=utf-8"),
         "/static/explorer.js": ("explorer.js", "text/javascript; charset=utf-8"),
         "/static/table.js": ("table.js", "text/javascript; charset=utf-8")}


def make_handler(api: ExplorerAPI):
    """A request handler class bound to ``api``."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "truco-lab-explore"

        def log_message(self, *args) -> None:  # quiet: the terminal shows the URL, not every request
            pass

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, obj) -> None:
            try:
                text = json.dumps(obj, allow_nan=False, default=str)
            except ValueError:  # a NaN somewhere (an unknown exploitability): null, walked only then
                text = json.dumps(_finite(obj), allow_nan=False, default=str)
            self._send(status, text.encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            url = urlsplit(self.path)
            if url.path in FILES:
                name, ctype = FILES[url.path]
                if url.path == "/" and not api.runs:  # play --browser: the table is the page
                    name = "table.html"
                return self._send(HTTPStatus.OK, (STATIC / name).read_bytes(), ctype)
            if not url.path.startswith("/api/"):
                return self._json(HTTPStatus.NOT_FOUND, {"error": f"no page {url.path}"})
            try:
                q = parse_qs(url.query, keep_blank_values=True, strict_parsing=False)
                params = {}
                for k, v in q.items():
                    if len(v) != 1:
                        raise BrowseError(f"parameter {k!r} is given {len(v)} times (give it once)")
                    params[k] = v[0]
                return self._json(HTTPStatus.OK, api.handle(url.path, params))
            except LookupError as e:
                return self._json(HTTPStatus.NOT_FOUND, {"error": str(e).strip("'\"")})
            except (BrowseError, ValueError) as e:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": str(e).splitlines()[0]})

    return Handler


def _finite(x):
    """JSON has no NaN: unknown numbers become null."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def serve(folders: list[str], host: str = "127.0.0.1", port: int = 8050, background: bool = False,
          tables=None):
    """Start the explorer over ``folders`` (and the browser table, with ``tables``: a
    :class:`~truco_lab.people.explorer.api.TableHost`); returns the server (its URL in ``server.url``).
    ``background``: serve from a daemon thread and return at once (tests, notebooks)."""
    api = ExplorerAPI(folders, tables)
    httpd = ThreadingHTTPServer((host, port), make_handler(api))
    httpd.daemon_threads = True
    h, p = httpd.server_address[:2]
    httpd.url = f"http://{'[' + h + ']' if ':' in h else h}:{p}/"
    if background:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd
