"""Render a PR comment as GitHub shows it and measure it in headless Chromium.

GitHub renders comments with cmark-gfm (``cmarkgfm``: the same C library, raw HTML allowed and then
sanitised by GitHub, so rendered here with ``CMARK_OPT_UNSAFE``) and styles them with the CSS that
``github-markdown-css`` packages. The page puts the result in a column of ``COLUMN`` px with GitHub's 16 px
comment padding; :class:`Browser` drives Debian's ``chromium`` through its ``chromedriver`` (selenium), one
session for every page.
"""

from __future__ import annotations

import html
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CSS = HERE / "node_modules/github-markdown-css/github-markdown-light.css"
COLUMN = 780
"""Width of a PR conversation's comment column (px)."""
PADDING = 16
"""GitHub's padding inside a comment body (px)."""
FIRST_SCREEN = 600
"""What a reviewer sees without scrolling, from the top of the comment (px)."""
CHROMIUM = ("chromium", "chromium-browser")
INSTALL = (
    "apt-get install chromium chromium-driver fonts-liberation && npm ci --prefix tests/browser "
    "(.ci/run does both)"
)


def missing() -> list[str]:
    """What the rendering test needs and this machine lacks (empty when everything is there)."""
    out = []
    if not any(shutil.which(b) for b in CHROMIUM):
        out.append("chromium")
    if not shutil.which("chromedriver"):
        out.append("chromedriver")
    if not CSS.is_file():
        out.append(f"github-markdown-css ({CSS.relative_to(HERE.parent.parent)})")
    for mod in ("cmarkgfm", "selenium"):
        try:
            __import__(mod)
        except ImportError:
            out.append(f"python package {mod}")
    return out


def to_html(markdown: str) -> str:
    """The comment body as GitHub's renderer writes it (GFM extensions, raw HTML kept)."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def page(markdown: str, title: str) -> str:
    """A standalone page holding the rendered comment in the comment column."""
    css = CSS.read_text(encoding="utf-8")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{css}\n"
        f"body {{ margin: 0; background: #fff; }}\n"
        f".markdown-body {{ box-sizing: border-box; width: {COLUMN}px; padding: {PADDING}px; }}\n"
        "</style></head><body><article class='markdown-body'>"
        f"{to_html(markdown)}</article></body></html>"
    )


_MEASURE = """
const body = document.querySelector('.markdown-body');
const top = body.getBoundingClientRect().top;
const style = getComputedStyle(body);
const content = body.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
const tables = [...body.querySelectorAll('table')].map((t, i) => ({
  index: i, width: t.scrollWidth, top: t.getBoundingClientRect().top - top,
  head: (t.querySelector('tr') || t).innerText.replace(/\\s+/g, ' ').trim().slice(0, 120)}));
const blocks = [...body.querySelectorAll('table, details, pre')];
const firstBlock = blocks.length ? Math.min(...blocks.map(b => b.getBoundingClientRect().top - top)) : null;
const items = [...body.querySelectorAll('li, p, h2')].map(e => ({
  tag: e.tagName, text: e.innerText.replace(/\\s+/g, ' ').trim(),
  top: e.getBoundingClientRect().top - top, bottom: e.getBoundingClientRect().bottom - top}));
return JSON.stringify({content, tables, firstBlock, items, height: body.scrollHeight,
                       pageWidth: document.documentElement.scrollWidth});
"""


@dataclass(frozen=True)
class Layout:
    """What the browser measured on one rendered comment (px, from the top of the comment)."""

    content: float
    """Width available to the comment's content (column minus padding)."""
    tables: list[dict[str, Any]]
    first_block: float | None
    """Top of the first table, fold or code block."""
    items: list[dict[str, Any]]
    height: float
    page_width: float

    def find(self, text: str, tags: tuple[str, ...] = ("LI", "P", "H2")) -> dict[str, Any] | None:
        """The first element of ``tags`` whose text contains ``text`` (whitespace-normalised)."""
        want = " ".join(text.split())
        return next((i for i in self.items if i["tag"] in tags and want in i["text"]), None)


class Browser:
    """One headless Chromium session (selenium + Debian's chromedriver) for many pages."""

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        opts = webdriver.ChromeOptions()
        opts.binary_location = next(p for p in map(shutil.which, CHROMIUM) if p)
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--window-size={COLUMN},{FIRST_SCREEN}",
        ):
            opts.add_argument(arg)
        service = Service(executable_path=shutil.which("chromedriver"))
        self.driver = webdriver.Chrome(options=opts, service=service)

    def measure(self, page_file: Path, screenshot: Path | None = None) -> Layout:
        """Load ``page_file``, measure it, and save a PNG of the whole comment to ``screenshot``."""
        self.driver.get(page_file.resolve().as_uri())
        data = json.loads(self.driver.execute_script(_MEASURE))
        if screenshot is not None:
            import base64

            height = min(int(data["height"]) + 1, 8000)
            shot = self.driver.execute_cdp_cmd(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": COLUMN, "height": height, "scale": 1},
                },
            )
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        return Layout(
            data["content"],
            data["tables"],
            data["firstBlock"],
            data["items"],
            data["height"],
            data["pageWidth"],
        )

    def close(self) -> None:
        """End the session."""
        self.driver.quit()


def artifacts_dir(root: Path) -> Path:
    """Where screenshots and pages go: ``$AD_DIFF_ARTIFACTS`` or ``out/browser`` under ``root``."""
    out = Path(os.environ.get("AD_DIFF_ARTIFACTS") or root / "out" / "browser")
    out.mkdir(parents=True, exist_ok=True)
    return out
