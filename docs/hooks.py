"""mkdocs hooks.

* The files of examples/ that the pages link to (``../examples/X``) are published
  with the site (``examples/X``), so the links resolve and ``mkdocs build --strict``
  checks them like any other.
* The docstrings' Sphinx roles (``:func:`fit```, ``:class:`~a.b.C```), which the
  API pages render from Markdown, are shown as the code they name (``fit``, ``C``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_LINK = re.compile(r"\]\(\.\./examples/")
_ROLE = re.compile(
    r":(?:func|class|meth|mod|data|attr|exc|obj):<code>(~?)([^<]*)</code>"
)


def on_files(files: Files, config: Any) -> Files:
    for path in sorted(EXAMPLES.iterdir()):
        if path.is_file() and path.suffix != ".ipynb":
            files.append(
                File.generated(config, f"examples/{path.name}", abs_src_path=str(path))
            )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return _LINK.sub("](examples/", markdown)


def _code(match: re.Match[str]) -> str:
    name = match.group(2)
    if match.group(1):
        name = name.rsplit(".", 1)[-1]
    return f"<code>{name}</code>"


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    return _ROLE.sub(_code, html)
