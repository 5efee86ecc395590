"""A Griffe extension for the API reference: every public name without a docstring is a warning.

mkdocstrings loads each package the reference renders; this extension then walks it and warns, through
Griffe's logger, on every public module, class, function and method without a docstring (the rule of
``tests/test_layout.py``). ``mkdocs build --strict`` turns those warnings into a failed build, so the
API reference cannot silently show an undocumented name. Options (mkdocs.yml): ``packages``, the
top-level packages to check (others, such as dependencies Griffe loads on the way, are left alone).
"""

from __future__ import annotations

from typing import Any

import griffe


def _public(name: str) -> bool:
    return not name.startswith("_")


def undocumented(pkg: griffe.Module) -> list[str]:
    """Every public module, class, function and method of ``pkg`` without a docstring, as ``file:line name``."""
    missing: list[str] = []

    def where(obj: griffe.Object) -> str:
        return f"{obj.relative_filepath}:{obj.lineno or 1} {obj.path}"

    def visit(obj: griffe.Object) -> None:
        for member in obj.members.values():
            if member.is_alias or not _public(member.name):
                continue  # an import is documented where it is defined; a private name is not reference material
            if member.is_module:
                if not member.docstring:
                    missing.append(where(member))
                visit(member)
            elif member.is_class or member.is_function:
                if not member.docstring:
                    missing.append(where(member))
                if member.is_class:
                    visit(member)

    if not pkg.docstring:
        missing.append(where(pkg))
    visit(pkg)
    return missing


class UndocumentedPublicNames(griffe.Extension):
    """Warn on each public name without a docstring in the configured packages (strict mode fails the build)."""

    def __init__(self, packages: list[str] | None = None) -> None:
        super().__init__()
        self.packages = set(packages or [])

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Called by Griffe once a package is loaded: warn on every undocumented public name in it."""
        if pkg.name not in self.packages:
            return
        for name in undocumented(pkg):
            griffe.logger.warning(f"no docstring for the public name {name}")
