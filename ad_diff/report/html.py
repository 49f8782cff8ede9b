"""The standalone HTML report (``--html FILE``): one self-contained file, rendered with Jinja2 templates.

The file loads nothing: CSS, the small filter script and the charts (SVG) are inline, and a
Content-Security-Policy allows only that stylesheet and that script (by hash), so even a name that slipped
past escaping could run nothing and fetch nothing. Autoescape is on and every name reaches the templates as
a raw string (see :mod:`ad_diff.report.html_model`); the only values inserted unescaped are ad-diff's own
stylesheet and script, read from the package. Before autoescape, every printed string passes the sink
layer's :func:`~ad_diff.core.sinks.visible` (Jinja ``finalize``): controls, bidi and zero-width characters
show as ``\\u202e``-style escapes, in text and attributes alike.

``ad-diff batch --html DIR`` writes ``DIR/index.html`` (the models, with links) and one report per model;
:func:`page_name` names a model's file (safe characters and a hash: model names come from folder names).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from ad_diff import __version__
from ad_diff.core.sinks import values, visible
from ad_diff.gate import Verdict
from ad_diff.report.html_view import KindPages, figure
from ad_diff.result import BatchResult, DiffResult

INDEX = "index.html"
"""The batch summary page's file name inside the ``--html`` folder."""


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}`` of the templates: a string from the inputs through the sink's escaper (markup
    of ad-diff's own, such as the stylesheet, is left as it is)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


@functools.lru_cache(maxsize=1)
def _env() -> Environment:
    # the report's templates, then the kinds' pages (a template in a kind's folder, html_view.KindPages)
    env = Environment(
        loader=ChoiceLoader([PackageLoader("ad_diff.report", "templates"), KindPages()]),
        autoescape=True,
        finalize=_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["figure"] = figure
    return env


def _asset(name: str) -> tuple[Markup, str]:
    """A stylesheet or script of the package, and its CSP source (``'sha256-...'``)."""
    loader = _env().loader
    assert loader is not None
    text = loader.get_source(_env(), name)[0]
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return Markup(text), f"sha256-{digest}"  # noqa: S704 - ad-diff's own file, not input


def _page(template: str, **context: Any) -> str:
    style, style_hash = _asset("report.css")
    script, script_hash = _asset("report.js")
    return _env().get_template(template).render(
        style=style, style_hash=style_hash, script=script, script_hash=script_hash, **context
    )


def render(result: DiffResult, verdict: Verdict, title: str | None = None) -> str:
    """The HTML report of one comparison."""
    result, verdict = values((result, verdict))  # every value on one line, bounded (core/sinks.py)
    # lazy: loaded only for the page being rendered (a single result or a batch)
    from ad_diff.report.html_model import build

    return _page("report.html.j2", r=build(result, verdict, title))


def page_name(model: str) -> str:
    """The file of ``model``'s report in a batch's ``--html`` folder: safe characters plus a short hash, so
    no model name can point outside the folder or collide with another (or with ``index.html``)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", model).strip(".")[:60] or "model"
    # surrogatepass: a folder name that is not UTF-8 (undecodable bytes) still names one page
    return f"{safe}-{hashlib.sha1(model.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}.html"


def render_batch(batch: BatchResult) -> str:
    """The batch's summary page: every model with its verdict and a link to its own report."""
    batch = values(batch)  # every value on one line, bounded (core/sinks.py)
    # lazy: loaded only for the page being rendered (a single result or a batch)
    from ad_diff.report.batch import summary_rows, title

    return _page("batch.html.j2", b=batch, title=title(batch), rows=summary_rows(batch), page_name=page_name,
                 version=__version__)


def render_batch_pages(batch: BatchResult) -> dict[str, str]:
    """File name -> text of every page of a batch's ``--html`` folder (the index and each compared model)."""
    pages = {INDEX: render_batch(batch)}
    for m in batch.models:
        if m.result is not None and m.verdict is not None:
            pages[page_name(m.name)] = render(m.result, m.verdict, title=f"ad-diff: {m.name}")
    return pages


__all__ = ["INDEX", "page_name", "render", "render_batch", "render_batch_pages"]
