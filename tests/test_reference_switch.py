"""The reference switch: a domain loaded with `generated=False` (or `TOOLGYM_REFERENCE=1`) runs
every tool through plain code, compiling no generated source, and the generated code equals it.

One harness holds the two equal over every bundled domain, the fixture domains and a few domains
generated from the fixture specs: random call sequences (schema-valid arguments, arguments of any
shape, keys of the seed and of earlier results, gold calls), each call's value or error (type and
message), the reads it told an observer and the state digest after it the same, and in the end the
same tables and change log.
"""

from __future__ import annotations

import functools
import io
import keyword
import tokenize
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simulator.lang.generated
from scoring import load_domain
from scoring.calls import NO_RESULT, call_references, resolve_arguments
from scoring.errors import CallReferenceError
from scoring.tasks import Task
from scoring.validation.fuzz import pools, seen_pools, strategy
from simulator import Domain, list_domain_dirs
from tests.conftest import FIXTURES

SYNTH = FIXTURES / "synth"
#: hand-written fixture domains, beside the bundled ones
HAND_WRITTEN = {"shop": FIXTURES / "shop", "stays": FIXTURES / "stays"}
#: specs the generator turns into a domain each (`toolgym generate`), and the records one is bound to
GENERATED_FROM = {
    "gen-shop": SYNTH / "shop_openapi.yaml",
    "gen-weather": SYNTH / "weather_tools.json",
    "gen-telecom": FIXTURES / "telecom" / "telecom_tools.json",
    "gen-usage": FIXTURES / "case_names" / "usage_openapi.yaml",
}
FROM_DATA = {"gen-airline": (FIXTURES / "airline" / "airline_tools.json", FIXTURES / "airline" / "db.json")}
NAMES = sorted([*(p.name for p in list_domain_dirs()), *HAND_WRITTEN, *GENERATED_FROM, *FROM_DATA])
#: gold task replays per domain (the random sequences cover the rest)
GOLD_TASKS = 25


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each domain's folder; the generated ones written once for this module."""
    from toolgen.fromdata import generate_domain
    from toolgen.pipeline import generate
    from toolgen.synth.run import synthesize

    out = {p.name: p for p in list_domain_dirs()} | HAND_WRITTEN
    root = tmp_path_factory.mktemp("generated")
    for name, spec in GENERATED_FROM.items():
        made = generate([spec], workers=1)
        synthesize(made.plan.domains, made.operations, root / name, seed=0, workers=1, with_tasks=False)
        (folder,) = (root / name).iterdir()
        out[name] = folder
    for name, (tools, data) in FROM_DATA.items():
        generate_domain(tools, data, root / name)
        out[name] = root / name
    return out


@pytest.fixture(scope="module", params=NAMES)
def pair(request: pytest.FixtureRequest, folders: dict[str, Path]) -> tuple[Domain, Domain]:
    """The domain loaded both ways: (generated, reference)."""
    folder = folders[request.param]
    fast, reference = load_domain(folder), load_domain(folder, generated=False)
    assert fast.generated and not reference.generated
    return fast, reference


# -- drawing calls ----------------------------------------------------------------------------

EDGE = st.sampled_from(
    [None, True, 0, -1, 2**70, -(2**64), 1e308, -0.0, 0.5, "", "x\udfff", "\ud800", "0", [], {}]
)
ANY_JSON = st.recursive(
    EDGE | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _any_arguments(schema: dict[str, Any], known: dict[str, list[Any]]) -> st.SearchStrategy[Any]:
    """Arguments of any shape: the tool's argument names (and others) with any values, known ones
    among them; now and then not an object at all."""
    props = list(schema.get("properties") or {})
    known_values = [v for values in known.values() for v in values[:5]]
    value = ANY_JSON | (st.sampled_from(known_values) if known_values else ANY_JSON)
    names = st.sampled_from(props) | st.text(max_size=6) if props else st.text(max_size=6)
    return st.dictionaries(names, value, max_size=4) | st.sampled_from([None, [], "x", 1])


def _one_off(valid: st.SearchStrategy[Any], schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid arguments with one argument of the tool given any value (often still valid: a huge
    number, a text SQLite cannot bind)."""
    props = sorted(schema.get("properties") or {})
    if not props:
        return valid
    return st.tuples(valid, st.sampled_from(props), EDGE | ANY_JSON).map(
        lambda drawn: {**drawn[0], drawn[1]: drawn[2]} if isinstance(drawn[0], dict) else drawn[0]
    )


def _calls(domain: Domain) -> st.SearchStrategy[tuple[str, Any]]:
    """One call: schema-valid arguments (mostly known values), one of them off, any arguments, or
    a gold call."""
    known = pools(domain)
    drawn = []
    for name, tool in sorted(domain.tools.items()):
        schema = tool.spec.input_schema
        valid = strategy(schema, None, known)
        drawn.append(st.tuples(st.just(name), valid))
        drawn.append(st.tuples(st.just(name), _one_off(valid, schema)))
        drawn.append(st.tuples(st.just(name), _any_arguments(schema, known)))
    gold = [(c.name, c.arguments) for t in domain.tasks for c in t.calls if not call_references(c.arguments)]
    calls = st.one_of(*drawn)
    unknown = st.tuples(st.sampled_from(["no_such_tool", ""]), st.just({}))
    return calls | calls | (st.sampled_from(gold) if gold else calls) | unknown


def _with_seen(args: Any, seen: dict[str, list[Any]], pick: int) -> Any:
    """`args` with one argument named like an id replaced by an id an earlier result held."""
    ids = seen.get("", [])
    if not isinstance(args, dict) or not ids:
        return args
    names = [k for k in args if k == "id" or k.endswith("_id")]
    if not names:
        return args
    return {**args, names[pick % len(names)]: ids[pick % len(ids)]}


# -- running them both ways --------------------------------------------------------------------


class Side:
    """One domain's episode, call after call: each call's outcome, reads and digest."""

    def __init__(self, domain: Domain, seed: int):
        self.reads: set[Any] = set()
        self.episode = domain.episode(seed=seed, observer=self.reads)

    def call(self, name: str, args: Any) -> tuple[tuple[Any, ...], Any]:
        """What the call did (its value's repr, or its error's type and message; the reads told; the
        digest after it), and its value (NO_RESULT: it failed)."""
        self.reads.clear()
        try:
            value = self.episode.call(name, args)
            did: tuple[Any, ...] = ("ok", repr(value))
        except Exception as exc:  # (the same error both ways, whatever it is)
            value, did = NO_RESULT, ("error", type(exc).__name__, str(exc))
        return (*did, sorted(self.reads, key=repr), self.episode.digest()), value

    def end(self) -> tuple[Any, ...]:
        with self.episode as ep:
            return repr(ep.export()), sorted(ep.changes(), key=repr), ep.digest()


def _same_run(domains: Sequence[Domain], calls: Generator[tuple[str, Any], Any, None], seed: int) -> int:
    """Run `calls` (a generator sent each call's value) on each domain side by side; assert each
    call the same on all of them, and their ends. How many calls ran."""
    sides = [Side(domain, seed) for domain in domains]
    ran = 0
    try:
        value = None
        while True:
            try:
                name, args = calls.send(value)
            except StopIteration:
                break
            did, value = sides[0].call(name, args)
            for other in sides[1:]:
                assert did == other.call(name, args)[0], (name, args)
            ran += 1
    finally:
        ends = [side.end() for side in sides]
    assert all(end == ends[0] for end in ends)
    return ran


def test_random_calls_give_the_same_values_errors_and_states(pair: tuple[Domain, Domain]) -> None:
    one_call = _calls(pair[0])

    @settings(derandomize=True, database=None)
    @given(st.data(), st.integers(0, 3))
    def same(data: st.DataObject, seed: int) -> None:
        def calls() -> Generator[tuple[str, Any], Any, None]:
            results: list[Any] = []
            for _ in range(data.draw(st.integers(1, 10), "length")):
                name, args = data.draw(one_call, "call")
                if results and data.draw(st.booleans(), "an id seen"):
                    args = _with_seen(args, seen_pools(results), data.draw(st.integers(0, 99), "pick"))
                value = yield name, args
                if value is not NO_RESULT:
                    results.append(value)

        _same_run(pair, calls(), seed)

    same()


def _gold_calls(task: Task) -> Generator[tuple[str, Any], Any, None]:
    """A task's gold calls, each sent its result back (references to them resolved)."""
    results: list[Any] = []
    for i, call in enumerate(task.calls):
        try:
            args = resolve_arguments(call.arguments, results, task.id, i)
        except CallReferenceError:
            return
        results.append((yield call.name, args))


def test_gold_calls_give_the_same_values_errors_and_states(pair: tuple[Domain, Domain]) -> None:
    for task in pair[0].tasks[:GOLD_TASKS]:
        _same_run(pair, _gold_calls(task), task.seed)


# -- the switch itself -------------------------------------------------------------------------


@pytest.fixture
def no_generated_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling any generated source fails the test (`simulator.lang.generated` is the one place)."""

    def refuse(source: str, filename: str) -> Any:
        raise AssertionError(f"generated source compiled: {filename}")

    monkeypatch.setattr(simulator.lang.generated, "_code", refuse)


def _gold_replays(domain: Domain) -> int:
    """Replay the gold calls of the first `GOLD_TASKS` tasks; how many calls ran."""
    return sum(_same_run([domain], _gold_calls(task), task.seed) for task in domain.tasks[:GOLD_TASKS])


@pytest.mark.parametrize("name", NAMES)
def test_the_reference_path_compiles_no_generated_source(
    name: str, folders: dict[str, Path], no_generated_code: None
) -> None:
    domain = load_domain(folders[name], generated=False)
    assert not domain.checks
    for tool in domain.tools.values():
        assert isinstance(tool._body, functools.partial)  # (run_body, set when compiled)
    _gold_replays(domain)
    _same_run([domain], _every_tool(domain), 0)


def _every_tool(domain: Domain) -> Generator[tuple[str, Any], Any, None]:
    """Each tool called once with no arguments."""
    for name in sorted(domain.tools):
        yield name, {}


def test_the_environment_variable_forces_the_reference_path(
    monkeypatch: pytest.MonkeyPatch, no_generated_code: None
) -> None:
    monkeypatch.setenv("TOOLGYM_REFERENCE", "1")
    domain = load_domain("bank")
    assert not domain.generated and all(not t.generated for t in domain.tables.values())
    assert _gold_replays(domain) > 0


def test_the_default_path_runs_generated_code() -> None:
    domain = load_domain(FIXTURES / "stays")
    assert domain.generated and domain.checks
    _gold_replays(domain)
    assert any(tool._body is not None and tool._body.__name__ == "run" for tool in domain.tools.values())


#: the only string literals generated source holds: the generators' own fixed text
FIXED_TEXT = {
    "'row'",
    "'*'",
    "'limit'",
    "'offset'",
    "'for_each: expected a list, got '",
    'f"invalid value: {exc}"',
}


@pytest.mark.parametrize("name", NAMES)
def test_generated_source_pastes_no_value_of_a_spec(
    name: str, folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The builder's safety rule (`simulator.lang.generated`): every generated text holds only
    fixed text, names the builder made and ints; no name or literal of the spec."""
    texts: list[str] = []
    compile_code = simulator.lang.generated._code.__wrapped__

    def record(source: str, filename: str) -> Any:
        texts.append(source)
        return compile_code(source, filename)

    monkeypatch.setattr(simulator.lang.generated, "_code", record)
    domain = load_domain(folders[name])
    _gold_replays(domain)
    _same_run([domain], _every_tool(domain), 0)
    assert texts
    for text in texts:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                assert token.string in FIXED_TEXT, (token.string, text)
            elif token.type == tokenize.NUMBER:
                assert token.string.isdigit(), (token.string, text)
            elif token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                assert token.string.isidentifier() and token.string.isascii(), (token.string, text)
