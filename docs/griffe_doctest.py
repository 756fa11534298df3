"""Griffe extension for the API reference (mkdocs.yml): fence the ``>>>``
examples of free-form docstrings as ``pycon`` code blocks, so Markdown does
not read them as nested block quotes; and give the functions that
``arktos.numpy._ops`` makes with ``name = _unary("op", "doc")`` their docstrings,
which static analysis would not see."""

from __future__ import annotations

import ast
from typing import Any

import griffe


def fence_examples(text: str) -> str:
    out: list[str] = []
    block: list[str] = []
    indent = ""

    def close() -> None:
        if block:
            out.append(f"{indent}```pycon")
            out.extend(block)
            out.append(f"{indent}```")
            block.clear()

    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(">>>"):
            if not block:
                indent = line[: len(line) - len(stripped)]
            block.append(line)
        elif block and stripped and not stripped.startswith("```"):
            block.append(line)  # a continuation ("...") or the example's output
        else:
            close()
            out.append(line)
    close()
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, **kwargs: Any) -> None:
        value = getattr(node, "value", None)
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "_unary" and len(value.args) == 2
                and isinstance(value.args[1], ast.Constant) and attr.docstring is None):
            attr.docstring = griffe.Docstring(fence_examples(value.args[1].value), parent=attr)
            attr.labels.add("function")

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_examples(obj.docstring.value)
