"""The explorer in Jupyter: an anywidget whose front end is the page's own ES module, answering its
requests through :class:`.api.ExplorerAPI` over the widget's messages. ``.selection`` is the decision
on screen as a DataFrame."""

from __future__ import annotations

from pathlib import Path

import anywidget
import pandas as pd
import traitlets

from truco_lab.lab.browse import BrowseError
from truco_lab.people.explorer.api import ExplorerAPI

_ESM = Path(__file__).parent / "static" / "explorer.js"


class Explorer(anywidget.AnyWidget):
    """``Explorer("results/eleven")`` (or two folders to compare): the match heatmap, decisions and diffs
    inline. ``state`` is the view's URL-hash state (``#view=decision&cell=10,10,1&vira=4d&history=...``)."""

    _esm = _ESM
    state = traitlets.Unicode("").tag(sync=True)

    def __init__(self, folder: str | Path, folder2: str | Path | None = None, **state) -> None:
        super().__init__()
        self._api = ExplorerAPI([folder] + ([folder2] if folder2 else []))
        if state:
            from urllib.parse import urlencode

            self.state = "#" + urlencode({k: str(v) for k, v in state.items()})
        self.on_msg(self._answer)

    def _answer(self, _widget, msg, _buffers) -> None:
        try:
            self.send({"id": msg["id"], "data": self._api.handle(msg["path"], {k: str(v) for k, v in
                                                                               msg.get("params", {}).items()})})
        except (BrowseError, LookupError, ValueError) as e:
            self.send({"id": msg.get("id"), "error": str(e).splitlines()[0]})

    def query(self, path: str, **params) -> dict:
        """Ask an endpoint directly (``query("/api/decision", cell="10,10,1", vira="4d")``)."""
        return self._api.handle(path, {k: str(v) for k, v in params.items()})

    @property
    def selection(self) -> pd.DataFrame:
        """The rows of the decision the widget shows (empty when it shows none)."""
        from urllib.parse import parse_qs

        q = {k: v[0] for k, v in parse_qs(self.state.lstrip("#"), keep_blank_values=True).items()}
        if not q.get("cell"):
            return pd.DataFrame()
        d = self._api.handle("/api/decision", {k: q.get(k, "") for k in ("cell", "vira", "history")})
        return pd.DataFrame(d["rows"]).assign(player=d["player"], history=d["history"], vira=d["vira"])
