"""The house by wings: data flows one way, and no module imports from a wing above its own.

Wings from the ground up: ground (errors, YAML, fuzzy names, languages) → kb (knowledge
and rules) → inputs (scenario, config.json, free text, evidence readers) → core (facts, engine,
layouts, formulas, records) → services (audit, size, collect, redaction, transcripts, the rule-base check) →
render (one module per format) → chat (the headless conversation) → tui (Textual) → cli.
Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "advisor"
WINGS = ["ground", "kb", "inputs", "core", "services", "render", "chat", "tui", "cli"]
TOP_LEVEL = {
    "errors": "ground",
    "yamlio": "ground",
    "fuzzy": "ground",
    "i18n": "ground",
    "redact": "services",
    "diskcache": "ground",
    "files": "ground",
    "structs": "ground",
    "regex_safety": "ground",
    "terminal": "ground",
    "audit": "services",
    "size": "services",
    "collect": "services",
    "transcripts": "services",
    "rules_check": "services",
    "calibration": "services",
    "fit": "services",
    "cli": "cli",
    "completion": "cli",
    "__main__": "cli",
}


def wing(module: str) -> str:
    """The wing of a dotted module name inside the package."""
    parts = module.split(".")
    if len(parts) == 1:
        return "ground"  # the package itself: its version
    name = parts[1]
    return TOP_LEVEL.get(name, name)


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("advisor")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            if base.startswith("advisor"):
                found.add(base)
    return found


def test_every_module_belongs_to_a_wing():
    unknown = sorted(m for m in modules() if wing(m) not in WINGS)
    assert not unknown, f"modules outside every wing: {unknown}"


def upward(module: str, path: Path) -> list[str]:
    """The imports of `module` that reach a higher wing."""
    mine = WINGS.index(wing(module))
    return [
        f"{module} ({wing(module)}) imports {target} ({wing(target)})"
        for target in sorted(imports(path, module))
        if WINGS.index(wing(target)) > mine
    ]


def test_no_module_imports_from_a_higher_wing():
    found = [line for module, path in sorted(modules().items()) for line in upward(module, path)]
    assert not found, "\n".join(found)


def test_no_import_circle_between_modules():
    graph = {m: {t for t in imports(p, m) if t in modules()} for m, p in modules().items()}
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        seen[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt == node or (node.startswith(nxt + ".") and nxt in graph):
                continue  # a package's own __init__ is not a circle
            if seen.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in seen:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        seen[node] = 2
        return None

    for m in sorted(graph):
        if m not in seen:
            circle = visit(m)
            assert circle is None, " -> ".join(circle)


def test_the_check_names_an_upward_lazy_import(tmp_path):
    """The check can fail: an engine that lazily imported the chat would be named."""
    bad = tmp_path / "engine.py"
    bad.write_text("def answer():\n    from advisor.chat.dialogue import ChatSession\n    return ChatSession\n")
    assert upward("advisor.core.engine", bad) == ["advisor.core.engine (core) imports advisor.chat.dialogue (chat)"]
