"""A validator for the XSD subset in ``tests/ci/data/junit-xunit.xsd``.

No XSD validator (lxml, xmlschema) is a dependency, so this reads the schema with
:mod:`xml.etree.ElementTree` and enforces what that subset expresses: each element is
declared; its attributes are declared and the required ones present; its children
are among those its content model names (in order, for an ``xs:sequence``); an
``xs:string`` element or a non-mixed type holds no stray content.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

XS = "{http://www.w3.org/2001/XMLSchema}"
SCHEMA = Path(__file__).parent / "data" / "junit-xunit.xsd"


@dataclass
class Declared:
    attributes: dict[str, bool] = field(default_factory=dict)  # name -> required
    children: list[str] = field(default_factory=list)
    ordered: bool = False
    mixed: bool = False
    text_only: bool = False


def load_schema(path: Path = SCHEMA) -> dict[str, Declared]:
    root = ET.parse(path).getroot()
    declared: dict[str, Declared] = {}
    for element in root.findall(f"{XS}element"):
        spec = Declared()
        if element.get("type") == "xs:string":
            spec.text_only = True
        complex_type = element.find(f"{XS}complexType")
        if complex_type is not None:
            spec.mixed = complex_type.get("mixed") == "true"
            for attribute in complex_type.findall(f"{XS}attribute"):
                spec.attributes[attribute.get("name", "")] = (
                    attribute.get("use") == "required"
                )
            for model in complex_type:
                if model.tag in (f"{XS}sequence", f"{XS}choice"):
                    spec.ordered = model.tag == f"{XS}sequence"
                    for child in model.iter(f"{XS}element"):
                        spec.children.append(child.get("ref", ""))
        declared[element.get("name", "")] = spec
    return declared


def validate(text: str, schema: dict[str, Declared] | None = None) -> list[str]:
    """The violations of ``text`` (a JUnit XML document); empty when it is valid."""
    schema = schema or load_schema()
    root = ET.fromstring(text)
    problems: list[str] = []
    if root.tag not in ("testsuites", "testsuite"):
        problems.append(f"root element <{root.tag}> is not <testsuites> or <testsuite>")

    def check(node: ET.Element, path: str) -> None:
        where = f"{path}/{node.tag}"
        spec = schema.get(node.tag)
        if spec is None:
            problems.append(f"{where}: element not in the schema")
            return
        if spec.text_only:
            if len(node) or node.attrib:
                problems.append(f"{where}: must hold text only")
            return
        for name in node.attrib:
            if name not in spec.attributes:
                problems.append(f"{where}: attribute {name!r} not allowed")
        for name, required in spec.attributes.items():
            if required and name not in node.attrib:
                problems.append(f"{where}: required attribute {name!r} missing")
        if not spec.mixed and (node.text or "").strip():
            problems.append(f"{where}: text not allowed")
        position = 0
        for child in node:
            if child.tag not in spec.children:
                problems.append(f"{where}: <{child.tag}> not allowed here")
                continue
            if spec.ordered:
                index = spec.children.index(child.tag)
                if index < position:
                    problems.append(f"{where}: <{child.tag}> out of order")
                position = index
            if not spec.mixed and (child.tail or "").strip():
                problems.append(f"{where}: text not allowed")
            check(child, where)

    check(root, "")
    return problems
