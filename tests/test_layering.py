"""The layering holds: the import graph, derived from the source with `ast`, breaks no rule.

Layers, lowest first: `simulator` (the agent-facing runtime) <- `scoring` (scoring, validation,
curation: the grading side) <- `toolgen` <- `toolgym` (the CLI, the composition root). A module
never imports a higher layer (any import counts: top-level, function-local or `TYPE_CHECKING`),
and no module takes part in an import cycle (a cycle hidden in a function is still a cycle; an
annotation-only `TYPE_CHECKING` import runs nothing and is not part of one). The checker is shown
to catch a planted import from the server into grading code, and a planted cycle.

Within `simulator`, the server side (the modules an agent-facing server runs, and every module they
import, transitively) holds no grading material, judged by what the code is, not by module names:
no class with a task's grading fields (`answer_facts`, `ignore_columns`, `expect_error`), no
grading type or error (`Task`, `GradedDomain`, `TranscriptError`, `CallReferenceError`), no
`$calls.N.path` syntax (the gold calls' references), nothing imported from a module that holds
any. A server process imports no grading module, and a server given a graded domain holds views.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "scoring", "toolgen", "toolgym")
#: package -> the packages it may import (besides itself)
ALLOWED = {
    "simulator": set(),
    "scoring": {"simulator"},
    "toolgen": {"simulator", "scoring"},
    "toolgym": {"simulator", "scoring", "toolgen"},
}
#: runtime modules the agent-facing server process loads must not even name grading material
SERVER_SIDE = (
    "simulator.serve.server",
    "simulator.serve.sessions",
    "simulator.serve._serversessions",
    "simulator.serve._servercalls",
    "simulator.serve._fastcall",
)
#: fields only a task's grading has: a class declaring one is a grading type, whatever its name
GRADING_FIELDS = frozenset({"answer_facts", "ignore_columns", "expect_error"})
#: the grading side's types and errors (`scoring.tasks`, `scoring.errors`)
GRADING_CLASSES = frozenset({"Task", "GradedDomain", "TranscriptError", "CallReferenceError"})
#: how a gold call's argument names an earlier call's result (`scoring.calls`)
CALLS_SYNTAX = "$calls."


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def sources() -> dict[str, tuple[Path, str]]:
    """{module: (path, source text)} of every module of the four packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            out[_module_name(path)] = (path, path.read_text(encoding="utf-8"))
    return out


def _type_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes inside `if TYPE_CHECKING:` blocks."""
    out: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        name = (
            test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
        )
        if name == "TYPE_CHECKING":
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def _imports(module: str, is_package: bool, text: str, known: set[str]) -> dict[str, bool]:
    """{project module `module` imports (anywhere in its source): whether only for type checking}."""
    found: dict[str, bool] = {}
    tree = ast.parse(text)
    typing_only = _type_only(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, node.module] if node.module else base)
            else:
                prefix = node.module or ""
            names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:  # `import a.b.c` of a non-module attribute: its module
                name = name.rpartition(".")[0]
            if name and name != module:
                found[name] = found.get(name, True) and id(node) in typing_only
    return found


def import_graph(texts: dict[str, tuple[Path, str]]) -> nx.DiGraph:
    known = set(texts)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for module, (path, text) in texts.items():
        for target, typing_only in _imports(module, path.name == "__init__.py", text, known).items():
            graph.add_edge(module, target, typing_only=typing_only)
    return graph


def violations(graph: nx.DiGraph) -> list[str]:
    """Every edge that imports a higher layer, and every import cycle."""
    out = []
    for a, b in sorted(graph.edges):
        pa, pb = a.split(".")[0], b.split(".")[0]
        if pa != pb and pb not in ALLOWED[pa]:
            out.append(f"{a} imports {b}: {pa} may not import {pb}")
    runtime = graph.edge_subgraph([(a, b) for a, b, t in graph.edges(data="typing_only") if not t])
    for component in nx.strongly_connected_components(runtime):
        if len(component) > 1:
            cycle = nx.find_cycle(runtime.subgraph(component))
            out.append("import cycle: " + " -> ".join([edge[0] for edge in cycle] + [cycle[0][0]]))
    return out


def _package_edges(graph: nx.DiGraph) -> set[str]:
    """The package-level edges (a package importing its own `__init__` from a submodule is not one)."""
    return {f"{a} -> {b}" for a, b in graph.edges if a.split(".")[0] != b.split(".")[0]}


def test_the_import_graph_breaks_no_layer_and_has_no_cycle() -> None:
    graph = import_graph(sources())
    assert graph.number_of_edges() > 100  # the graph was really derived
    assert violations(graph) == []


def grading_material(text: str) -> list[str]:
    """What in a module's source is grading material: classes declaring a task's grading fields,
    the grading types and errors, the `$calls` syntax (see the module docstring)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            if node.name in GRADING_CLASSES:
                found.append(f"defines {node.name}")
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.target.id in GRADING_FIELDS:
                        found.append(f"defines {node.name} with a task's field {stmt.target.id}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith(CALLS_SYNTAX)
        ):
            found.append(f"holds the {CALLS_SYNTAX}N.path syntax")
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                for name in {alias.name, alias.asname or alias.name} & (GRADING_CLASSES | GRADING_FIELDS):
                    found.append(f"imports {name}")
    return found


def server_side(graph: nx.DiGraph) -> set[str]:
    """The server-side modules and every module they import, transitively (type-only imports too)."""
    return {m for root in SERVER_SIDE for m in {root, *nx.descendants(graph, root)}}


def server_side_violations(texts: dict[str, tuple[Path, str]]) -> list[str]:
    """Every server-side module (`server_side`) outside `simulator`, or holding grading material."""
    out = []
    for module in sorted(server_side(import_graph(texts))):
        if not module.startswith("simulator"):
            out.append(f"{module} is imported by the server side")
            continue
        out.extend(f"{module} {what}" for what in grading_material(texts[module][1]))
    return out


def test_the_server_side_holds_no_grading_types_or_imports() -> None:
    texts = sources()
    reached = server_side(import_graph(texts))
    assert {
        "simulator.runtime.domain",
        "simulator.runtime.episode",
        "simulator.serve.serving",
        "simulator.format.taskviews",
    } <= reached
    assert server_side_violations(texts) == []
    # the checker sees grading material where it is: in scoring, and in the builders' syntax
    assert grading_material(texts["scoring.tasks"][1])
    assert grading_material(texts["scoring.errors"][1])
    assert grading_material(texts["simulator.format.callsyntax"][1])


@pytest.mark.parametrize(
    ("module", "planted", "caught"),
    [
        (
            "simulator.serve._fastcall",
            "from ..format.callsyntax import CallRef as _Ref\n",
            "simulator.format.callsyntax holds",
        ),
        ("simulator.runtime.domain", "from .. import builders\n", "simulator.format.callsyntax holds"),
        (
            "simulator.serve._servercalls",
            "class Gold:\n    answer_facts: list[str]\n",
            "simulator.serve._servercalls defines Gold with a task's field answer_facts",
        ),
        ("simulator.errors", "class TranscriptError(ToolgymError):\n    pass\n", "defines TranscriptError"),
        (
            "simulator.serve.serving",
            "def ref(n):\n    return f'$calls.{n}.id'\n",
            "simulator.serve.serving holds",
        ),
        ("simulator.serve.sessions", "from scoring.tasks import Task\n", "scoring.tasks is imported"),
        (
            "simulator.serve._serversessions",
            "from ..format.taskviews import TaskView as Task\n",
            "imports Task",
        ),
    ],
)
def test_a_planted_grading_type_or_import_on_the_server_side_fails(
    module: str, planted: str, caught: str
) -> None:
    texts = sources()
    path, text = texts[module]
    texts[module] = (path, text + "\n" + planted)
    found = server_side_violations(texts)
    assert any(caught in v for v in found), found


def test_a_server_process_imports_no_grading_code() -> None:
    """Importing the server side loads no module of a higher layer, nor one holding grading material."""
    texts = sources()
    holding = sorted(
        m for m, (_, text) in texts.items() if m.startswith("simulator") and grading_material(text)
    )
    code = (
        f"import sys\nfor m in {list(SERVER_SIDE)!r}: __import__(m)\nprint('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "simulator.serve.server" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("scoring", "toolgen", "toolgym")] == []
    assert set(loaded) & set(holding) == set(), holding


def test_a_server_given_a_graded_domain_holds_task_views_only() -> None:
    """The types a server holds: a plain `Domain` without tasks, and a `TaskView` of each task; no
    object reachable from the server is a task with gold, a gold call, or a graded domain."""
    from scoring import load_domain
    from scoring.tasks import Call, GradedDomain, Task
    from simulator import Domain
    from simulator.format.taskviews import TaskView
    from simulator.serve.server import DomainServer

    domain = load_domain("bank")
    assert isinstance(domain, GradedDomain) and domain.task("bank-001").calls
    server = DomainServer(domain)
    assert type(server.domain) is Domain and not server.domain.tasks
    assert server.domain.fingerprint() == domain.fingerprint()
    assert {type(v) for v in server.tasks.views.values()} == {TaskView}
    assert len(server.tasks) == len(domain.tasks)
    seen: set[int] = set()
    stack: list[object] = [server]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type)) or obj is None:
            continue
        seen.add(id(obj))
        assert not isinstance(obj, (Task, Call, GradedDomain)), type(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__") and type(obj).__module__.split(".")[0] == "simulator":
            stack.extend(vars(obj).values())
    assert len(seen) > 100  # the walk really went through the server's objects


def test_the_runtime_holds_no_grading_material_but_the_builders_syntax() -> None:
    """Nowhere in `simulator` is a grading type, field or error: the only grading material is the
    `$calls` syntax the builders write gold calls with (`simulator.format.callsyntax`), which no server-side
    module imports."""
    texts = sources()
    holding = {m for m, (_, text) in texts.items() if m.startswith("simulator") and grading_material(text)}
    assert holding == {"simulator.format.callsyntax"}
    assert not holding & server_side(import_graph(texts))


@pytest.mark.parametrize(
    "planted",
    [
        "from scoring.validation.gold import replay_gold\n",
        "import scoring\n",
        "def f():\n    from toolgym.app import app\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from scoring.rollout import Rollout\n",
    ],
)
def test_a_planted_import_from_the_server_into_grading_code_fails(planted: str) -> None:
    texts = sources()
    path, text = texts["simulator.serve.server"]
    texts["simulator.serve.server"] = (path, text + "\n" + planted)
    found = violations(import_graph(texts))
    assert found and all(v.startswith("simulator.serve.server imports ") for v in found), found


def test_a_planted_cycle_fails() -> None:
    """A runtime module importing one that imports it back (the old domain <-> episode: `Domain.episode`
    makes episodes, so an episode may name `Domain` only for type checking) is refused."""
    texts = sources()
    path, text = texts["simulator.runtime.episode"]
    texts["simulator.runtime.episode"] = (path, text + "\ndef f():\n    from .domain import Domain\n")
    found = violations(import_graph(texts))
    assert any(v.startswith("import cycle:") and "simulator.runtime.domain" in v for v in found), found


def test_package_level_edges_only_go_down() -> None:
    edges = _package_edges(import_graph(sources()))
    assert edges  # scoring imports simulator, the CLI imports everything
    for edge in edges:
        a, b = (part.strip().split(".")[0] for part in edge.split("->"))
        assert b in ALLOWED[a], edge


def test_scoring_is_cut_into_scoring_validation_and_curation() -> None:
    """Inside the grading side: curation (metrics, pass rates, health) sits on top — nothing in
    `scoring` imports it — and the runtime's grading material lives in `scoring.validation`."""
    graph = import_graph(sources())
    for a, b in graph.edges:
        if b.startswith("scoring.curation") and a.startswith("scoring"):
            assert a.startswith("scoring.curation"), f"{a} imports {b}"
    for module in ("gold", "manifest", "validate", "fuzz", "mutate", "orders", "reach"):
        assert f"scoring.validation.{module}" in graph
    assert "scoring.curation.metrics" in graph
