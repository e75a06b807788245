"""``from truco_lab.explore import Explorer``: the study lab's explorer as a Jupyter widget
(:mod:`truco_lab.people.explorer.widget`), and :func:`serve` for the web app."""

from truco_lab.people.explorer.server import serve
from truco_lab.people.explorer.widget import Explorer

__all__ = ["Explorer", "serve"]
