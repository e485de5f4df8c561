"""Text from a result made safe to show: control characters replaced by escapes.

Names and values in a result come from data and plug-ins (column names, category
values, generator names, claim keys, error messages). Markup escaping (Jinja2,
ElementTree, :func:`~dpaudit.reports.markdown.md_escape`) handles ``<``, ``>`` and
``&`` but passes control characters through: an ESC in a column name then recolours
or rewrites the user's terminal, a bidi override (U+202E) makes a name read
backwards, a vertical tab or an ESC is illegal in XML 1.0, and a lone surrogate (a
JSON ``"\\ud800"``) cannot be encoded as UTF-8, so the report cannot be written at
all. :func:`printable` is the one function every renderer (terminal, HTML,
Markdown, JUnit, figures) and the command line's terminal lines pass such text
through. JSON output needs none of it: ``json.dumps`` (``ensure_ascii=True``, the
default everywhere in dpaudit) writes every such character as a ``\\uXXXX`` escape,
so the data stays exact.
"""

from __future__ import annotations

import re

__all__ = ["UNPRINTABLE", "printable", "valid_unicode"]

#: Characters shown as escapes: C0 controls, DEL and C1 controls (the ESC and CSI
#: of terminal sequences, VT, NUL, ...), the bidirectional formatting characters
#: (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), the line and
#: paragraph separators, surrogate code points (never valid on their own) and the
#: noncharacters U+FFFE and U+FFFF (not allowed in XML).
UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, *, keep: str = "") -> str:
    """``str(text)`` with every :data:`UNPRINTABLE` character shown as its Python
    escape (``\\n``, ``\\x1b``, ``\\x0b``, ``\\x9b``, ``\\u202e``, ``\\ud800``).

    The escape is visible, so a name is never silently changed into another one,
    and the result can always be encoded as UTF-8 and held in XML 1.0. A backslash
    already in the text is kept as it is (a Windows path stays readable), so the
    text ``\\x1b`` and an escaped ESC look alike: the reports are for reading,
    result.json keeps the exact value.

    Args:
        text: The text (any object: its ``str``).
        keep: Control characters the output format itself uses and that may pass
            unchanged: ``"\\n"`` for a document whose lines are data-free
            structure, ``"\\n\\t"`` for XML text. One-line fields keep none, so
            a newline in a name cannot start a line of its own.

    Returns:
        The text, safe to print, to write as UTF-8 and to put in XML.

    Example:
        >>> printable("col\\x1b[31m\\u202eA\\ud800")
        'col\\\\x1b[31m\\\\u202eA\\\\ud800'
        >>> printable("a\\nb", keep="\\n"), printable("a\\nb")
        ('a\\nb', 'a\\\\nb')
    """
    s = str(text)
    if keep:
        return UNPRINTABLE.sub(
            lambda m: m.group() if m.group() in keep else _escape(m), s
        )
    return UNPRINTABLE.sub(_escape, s)


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(value: object) -> object:
    """``value`` (plain JSON: dicts, lists, strings, numbers) with every surrogate
    code point in its strings and keys shown as its escape (``\\ud800``), as
    :func:`printable` shows it in the other formats: the JSON report then holds only
    valid Unicode, and names the same text as every other report.

    >>> valid_unicode({"g\\ud800": ["x\\udcff", 1]})
    {'g\\\\ud800': ['x\\\\udcff', 1]}
    """
    if isinstance(value, str):
        return _SURROGATE.sub(_escape, value)
    if isinstance(value, dict):
        return {valid_unicode(k): valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [valid_unicode(v) for v in value]
    return value
