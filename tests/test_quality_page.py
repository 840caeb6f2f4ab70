"""`toolgym quality --html`: the page has the per-task table `--json` has, every verdict with its
reason beside it, and chart labels that fit (long domain names and task ids wrap, never cut)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from scoring.quality import quality, render_html
from tests.test_quality import healthy, row
from toolgym.cli import app

runner = CliRunner()
LONG_DOMAIN = "assorted-functions-and-utilities-toolbox-for-integration-testing-of-long-names@0.1.0"
LONG_TASK = "an_unusually_long_task_identifier_generated_by_toolgen_synthesis_without_any_hyphens_007"
#: a character's width in ems that no label of a system sans-serif font exceeds on average
GENEROUS_EM = 0.7
VOID = {"br", "meta", "img", "input", "hr", "link"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find(self, tag: str, **attrs: str) -> list[Node]:
        """Every descendant with this tag (and these attribute values), in document order."""
        found = []
        for c in self.children:
            if isinstance(c, Node):
                if c.tag == tag and all(c.attrs.get(k.rstrip("_")) == v for k, v in attrs.items()):
                    found.append(c)
                found.extend(c.find(tag, **attrs))
        return found


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        while self.stack[-1].tag != tag:
            self.stack.pop()
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> Node:
    tree = _Tree()
    tree.feed(page)
    return tree.root


def rows_with_long_names() -> list[dict[str, Any]]:
    """A healthy domain, and one of long names with a broken and a trivial task, random solving
    one task sometimes."""
    rows = healthy("bank@1.1.0")
    for r in healthy(LONG_DOMAIN):
        r["task"] = LONG_TASK if r["task"] == "t1" else r["task"]
        if r["policy"] == "gold" and r["task"] == "t2":
            r |= {"reward": 0.0, "partial": 0.5}
        rows.append(r)
    rows += [row("t3", "random", 1.0, domain=LONG_DOMAIN, sample=1)]
    rows += [row(t, "random", 0.0, 0.1, domain="bank@1.1.0", sample=1) for t in ("t1", "t2", "t3")]
    return rows


def cli(tmp_path: Path, rows: list[dict[str, Any]]) -> tuple[dict[str, Any], Node, str]:
    """`toolgym quality RESULTS --json --html PAGE`: the JSON, the parsed page, the human output."""
    results, page = tmp_path / "results.jsonl", tmp_path / "q.html"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = runner.invoke(app, ["quality", str(results), "--json", "--html", str(page)])
    assert result.exit_code == 0, result.output
    human = runner.invoke(app, ["quality", str(results)])
    assert human.exit_code == 0, human.output
    return json.loads(result.stdout), parse(page.read_text(encoding="utf-8")), human.stdout


def _stat(value: Any, field: str) -> str:
    if value is None:
        return ""
    if field == "pass_rate":
        return f"{value:.0%}"
    return f"{value:.3f}" if field == "mean_partial" else str(value)


def test_the_page_has_the_per_task_table_json_has(tmp_path):
    report, page, _ = cli(tmp_path, rows_with_long_names())
    tables = page.find("table", class_="tasks")
    assert len(tables) == len(report["domains"]) == 2
    for d, table in zip(report["domains"], tables, strict=True):
        heads = [th.text() for th in table.find("th")]
        assert heads == [
            "task",
            "flags",
            "policy",
            "rollouts",
            "scored",
            "infra",
            "pass",
            "partial",
            f"spread ({d['train']})",
        ]
        groups = table.find("tbody")
        assert [g.find("td")[0].text() for g in groups] == [t["task"] for t in d["tasks"]]
        for task, group in zip(d["tasks"], groups, strict=True):
            trs = group.find("tr")
            assert len(trs) == len(task["policies"])
            first = [td.text() for td in trs[0].find("td")]
            assert first[-1] == ("" if task["spread"] is None else f"{task['spread']:.3f}")
            flags = first[1]
            assert (
                flags == "kept"
                if not task["flags"]
                else all(f"{f}: {task['reasons'][f]}" in flags for f in task["flags"])
            )
            for i, (policy, stats) in enumerate(sorted(task["policies"].items())):
                cells = [td.text() for td in trs[i].find("td")]
                cells = cells[2:-1] if i == 0 else cells
                fields = ["rollouts", "scored", "infra", "pass_rate", "mean_partial"]
                assert cells == [policy, *(_stat(stats[f], f) for f in fields)], (task["task"], policy)
    long = report["domains"][0]
    assert long["domain"] == LONG_DOMAIN and long["flags"] == ["broken", "trivial"]
    reasons = {t["task"]: t["reasons"] for t in long["tasks"]}
    assert reasons["t2"] == {"broken": "gold passes 0% of its 1 scored rollout(s), not all"}
    assert reasons["t3"] == {"trivial": "a weak baseline solves it: random passes 50% of 2"}


def test_every_flag_and_verdict_carries_its_reason_beside_it(tmp_path):
    report, page, human = cli(tmp_path, rows_with_long_names())
    domains = page.find("table", class_="domains")[0].find("tbody")
    assert [b.find("td")[0].text() for b in domains] == [LONG_DOMAIN, "bank@1.1.0"]
    for d, body in zip(report["domains"], domains, strict=True):
        assert body.attrs.get("class") == ("bad" if d["flags"] else None)
        items = body.find("li")
        assert [(li.attrs["class"], li.find("b")[0].text()) for li in items] == [
            (v["status"], v["label"]) for v in d["verdicts"]
        ]
        for li, v in zip(items, d["verdicts"], strict=True):
            assert li.text() == f"{v['label']}: {v['reason']}"
            assert f"{v['label']}: {v['reason']}" in " ".join(human.split())
        assert [v["label"] for v in d["verdicts"] if v["status"] == "flag"] == d["flags"]
    long, bank = ({v["check"]: v for v in d["verdicts"]} for d in report["domains"])
    assert long["broken"]["reason"] == ("gold fails 1 of 3 tasks (33%, over the 10% tolerance): t2")
    assert long["trivial"]["reason"] == (
        "noop or random passes 1 of 3 tasks (33%, over the 10% tolerance): t3"
    )
    assert long["discrimination"]["reason"] == (
        "the baselines rank as expected (gold > gold-corrupt > random ≥ noop): "
        "gold > gold-corrupt:1 > random > noop, Kendall tau 1.00 ≥ 0.60"
    )
    assert long["trainability"]["label"] == "trainable"
    assert "1 of 3 tasks are solved sometimes (but not always) by random" in long["trainability"]["reason"]
    # the case that read "trainable 0%" beside "ok": now a warning with its reason
    assert bank["trainability"]["status"] == "warning" and bank["trainability"]["label"] == "not trainable"
    assert (
        "0% of 3 tasks have mixed outcomes (0 always solved, 3 never solved" in bank["trainability"]["reason"]
    )
    assert bank["discrimination"]["reason"].endswith("Kendall tau 1.00 ≥ 0.60")
    assert {v["label"] for v in bank.values()} == {
        "not broken",
        "not trivial",
        "discriminating",
        "not trainable",
    }
    assert "ok (not trainable)" in human


def test_chart_labels_fit_their_chart_and_are_never_cut(tmp_path):
    report, page, _ = cli(tmp_path, rows_with_long_names())
    charts = page.find("svg")
    assert len(charts) == 2 + len(report["domains"])  # two bar charts, a histogram per domain
    for svg in charts:
        width = float(svg.attrs["width"])
        for text in svg.find("text"):
            font = float(text.attrs["font-size"])
            spans = text.find("tspan") or [text]
            for span in spans:
                x = float(span.attrs.get("x", text.attrs["x"]))
                w = len(span.text()) * font * GENEROUS_EM
                anchor = text.attrs.get("text-anchor", "start")
                lo, hi = {"start": (x, x + w), "middle": (x - w / 2, x + w / 2), "end": (x - w, x)}[anchor]
                assert lo >= 0 and hi <= width, (span.text(), lo, hi, width)
    for bars in charts[:2]:  # each domain's whole name is a label, wrapped into lines
        names = ["".join(s.text() for s in t.find("tspan")) for t in bars.find("text")]
        assert LONG_DOMAIN in names and "bank@1.1.0" in names
        (long,) = [t for t in bars.find("text") if "".join(s.text() for s in t.find("tspan")) == LONG_DOMAIN]
        assert len(long.find("tspan")) >= 2
    # names outside the charts are HTML text, which wraps: the task id and domain name in full
    assert LONG_TASK in [td.text() for td in page.find("td", class_="name")]
    assert LONG_DOMAIN in [h.text() for h in page.find("h2")]


def test_the_page_is_the_library_rendering_of_the_report(tmp_path):
    rows = rows_with_long_names()
    _, page, _ = cli(tmp_path, rows)
    again = parse(render_html(quality(rows, str(tmp_path / "results.jsonl"))))
    assert again.text() == page.text()


def test_each_flag_of_the_library_report_is_a_verdict_with_its_reason():
    flat = [r | {"partial": 0.1} if r["policy"].startswith("gold-corrupt") else r for r in healthy("n@1")]
    only_model = [row("t1", "openai:m@u", 1.0, domain="u@1"), row("t1", "openai:m@u", 0.0, domain="u@1")]
    only_gold = [row("t1", "gold", 1.0, domain="g@1")]
    report = quality(flat + only_model + only_gold)
    verdicts = {d.domain: {v.check: v for v in d.verdicts} for d in report.domains}
    for d in report.domains:
        assert [v.label for v in d.verdicts if v.status == "flag"] == d.flags, d.domain
        assert all(v.reason for v in d.verdicts)
    assert verdicts["n@1"]["discrimination"].reason == (
        "the observed order gold > gold-corrupt:1 = random > noop is not strictly "
        "gold > gold-corrupt > random ≥ noop (tau 0.91)"
    )
    assert (
        verdicts["u@1"]["discrimination"].reason == "no gold rollouts: nothing to rank the baselines against"
    )
    assert verdicts["u@1"]["broken"].label == "broken: not checked"
    assert (
        verdicts["g@1"]["discrimination"].reason == "only gold was run: no other baseline to rank it against"
    )
    one_sample = verdicts["n@1"]["trainability"]
    assert one_sample.label == "not trainable" and "(run --k 2 or more)" in one_sample.reason
