"""Similarity reports (issue 27, part 4): do the fingerprints catch disguised copies, do they
leave independent code alone, and how long does a 500-student report take to render?

1. Recall. Every exercise's reference solution and mutants (exercises/coding/*/solution.py,
   mutants/*.py) is copied COPIES times, each copy disguised at once in every way: all names
   the program defines renamed, top-level functions and classes (and methods) reordered,
   comments and dead code (unused functions, ``if False:`` blocks) added, and ``for`` loops
   rewritten as ``while`` loops. A copy is caught when its pair with the original scores at
   least the report's threshold (the exercise's starter left out, as on the site).
2. False pairs. "Independent" means written for another exercise: every pair of files
   (solution, mutants, starter) of two different exercises. Files of one exercise are not
   independent of each other (a mutant is the solution with one fault planted), so they are
   not counted. A false pair is an independent pair at or above the threshold.
3. Render time. A course with one assignment of one exercise and 500 students, each with a
   counted submission and its fingerprints (generated programs: 480 independent ones and
   20 disguised copies in four rings), rendered by its instructor through Django's test
   client (needs DATABASE_URL; PostgreSQL in the README's run).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/gd_bench python -m bench similarity
Targets: recall >= 95 %, false pairs <= 5 %, report < 1 s.
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import random
import statistics
import time
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, setup_test_environment
from django.utils import timezone

from accounts.models import User
from catalog.models import Exercise, ExerciseVersion
from courses.models import Assignment, AssignmentItem, Course, ItemScore, Membership
from grading.models import Submission
from similarity.fingerprints import MIN_PRINTS, THRESHOLD, WINDOW, K, fingerprint, score
from similarity.services import fingerprint_store

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
COPIES = int(os.environ.get("BENCH_COPIES", "3"))
RUNS = int(os.environ.get("BENCH_RUNS", "10"))
STUDENTS = 500

# -- disguises -------------------------------------------------------------------------------

class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        # the program's own methods and fields (self.x, obj.method) are renamed too
        node.attr = self.names.get(node.attr, node.attr)
        self.generic_visit(node)
        return node


def _defined_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("__"):
            names.add(node.name)
        elif isinstance(node, ast.arg) and node.arg not in ("self", "cls"):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


class _LoopRewriter(ast.NodeTransformer):
    """for x in range(n): body  ->  x = 0 / while x < n: body; x += 1 (no continue inside);
    any other for loop -> an explicit iterator and next() in a while True."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.count = 0

    def visit_For(self, node: ast.For) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if node.orelse or any(isinstance(n, ast.Continue) for n in ast.walk(node)):
            return node
        self.count += 1
        it = f"_it{self.count}"
        source = (
            f"{it} = iter(ITER)\nwhile True:\n    try:\n        TARGET = next({it})\n"
            f"    except StopIteration:\n        break\n    pass\n"
        )
        new = ast.parse(source).body
        new[0].value.args[0] = node.iter  # type: ignore[attr-defined]
        loop = new[1]
        assert isinstance(loop, ast.While)
        trying = loop.body[0]
        assert isinstance(trying, ast.Try)
        trying.body[0].targets[0] = node.target  # type: ignore[attr-defined]
        loop.body = [trying, *node.body]
        return new


def _dead_function(rng: random.Random, n: int) -> ast.stmt:
    a, b = rng.sample("abcdefghpqrstuvw", 2)
    source = (
        f"def _helper_{n}_{rng.randrange(1000)}({a}, {b}=None):\n"
        f"    '''Unused helper.'''\n"
        f"    if {b} is None:\n        {b} = []\n"
        f"    for _k in range({rng.randrange(2, 9)}):\n        {b}.append({a} * _k)\n"
        f"    return {b}\n"
    )
    return ast.parse(source).body[0]


def _dead_block(rng: random.Random) -> ast.stmt:
    return ast.parse(f"if False:\n    _unused = {rng.randrange(100)}\n    print(_unused)\n").body[0]


def disguise(code: str, seed: int) -> str:
    """``code`` with every disguise of the module docstring applied."""
    rng = random.Random(seed)
    tree = ast.parse(code)
    names = _defined_names(tree)
    words = ["val", "node", "tmp", "acc", "item", "thing", "res", "buf", "obj", "elem", "data", "out"]
    mapping = {name: f"{rng.choice(words)}_{i}" for i, name in enumerate(sorted(names))}
    tree = _Renamer(mapping).visit(tree)
    tree = _LoopRewriter(rng).visit(tree)
    # reorder top-level definitions and methods (imports stay first)
    head = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    rest = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    rng.shuffle(rest)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            rng.shuffle(node.body)
    # dead code: unused functions between the definitions, dead blocks inside them
    for i in range(rng.randrange(1, 4)):
        rest.insert(rng.randrange(len(rest) + 1), _dead_function(rng, i))
    for node in ast.walk(ast.Module(body=rest, type_ignores=[])):
        if isinstance(node, ast.FunctionDef) and rng.random() < 0.5:
            node.body.insert(rng.randrange(len(node.body) + 1), _dead_block(rng))
    tree.body = head + rest
    ast.fix_missing_locations(tree)
    lines = ast.unparse(tree).splitlines()
    comments = ["# compute the thing", "# TODO tidy", "# helper step", "# see the lecture notes", "# edge case"]
    out = []
    for line in lines:
        if rng.random() < 0.2:
            out.append(line[: len(line) - len(line.lstrip())] + rng.choice(comments))
        out.append(line)
    return "\n".join(out) + "\n"


# -- the corpus ------------------------------------------------------------------------------

def corpus() -> dict[str, dict[str, str]]:
    """exercise slug -> {file name: code} of its solution, mutants and starter."""
    found: dict[str, dict[str, str]] = {}
    for folder in sorted((ROOT / "exercises" / "coding").iterdir()):
        if not (folder / "solution.py").exists():
            continue
        files = {"solution.py": (folder / "solution.py").read_text()}
        for mutant in sorted((folder / "mutants").glob("*.py")) if (folder / "mutants").exists() else []:
            files[f"mutants/{mutant.name}"] = mutant.read_text()
        if (folder / "starter.py").exists():
            files["starter.py"] = (folder / "starter.py").read_text()
        found[folder.name] = files
    return found


def hashes(code: str, ignore: set[int]) -> set[int]:
    return {p.hash for p in fingerprint(code, ignore=ignore)}


def quality(threshold: float) -> dict[str, Any]:
    files = corpus()
    starters = {slug: hashes(f.get("starter.py", ""), set()) for slug, f in files.items()}
    recall_scores: list[float] = []
    missed: list[str] = []
    too_short: list[str] = []
    for slug, group in files.items():
        for name, code in group.items():
            if name == "starter.py":
                continue
            original = hashes(code, starters[slug])
            if len(original) < MIN_PRINTS:  # the report calls these too short to compare
                too_short.append(f"{slug}/{name}")
                continue
            for copy in range(COPIES):
                disguised = hashes(disguise(code, seed=zlib.crc32(f"{slug}/{name}#{copy}".encode())), starters[slug])
                value = score(original, disguised).score
                recall_scores.append(value)
                if value < threshold:
                    missed.append(f"{slug}/{name}#{copy}: {value:.2f}")
    independent: list[float] = []
    worst: list[tuple[float, str]] = []
    everything = [(slug, name, code) for slug, group in files.items() for name, code in group.items()]
    for (s1, n1, c1), (s2, n2, c2) in itertools.combinations(everything, 2):
        if s1 == s2:
            continue
        ignore = starters[s1] | starters[s2]
        h1, h2 = hashes(c1, ignore), hashes(c2, ignore)
        if min(len(h1), len(h2)) < MIN_PRINTS:
            continue
        value = score(h1, h2).score
        independent.append(value)
        worst.append((value, f"{s1}/{n1} ~ {s2}/{n2}"))
    caught = sum(v >= threshold for v in recall_scores)
    false = sum(v >= threshold for v in independent)
    worst.sort(reverse=True)
    return {
        "threshold": threshold,
        "exercises": len(files),
        "originals": sum(len(g) - ("starter.py" in g) for g in files.values()),
        "too_short": too_short,
        "disguised_copies": len(recall_scores),
        "caught": caught,
        "recall": caught / len(recall_scores),
        "copy_score_median": statistics.median(recall_scores),
        "copy_score_min": min(recall_scores),
        "missed": missed[:20],
        "independent_pairs": len(independent),
        "false_pairs": false,
        "false_pair_rate": false / len(independent),
        "independent_score_p99": sorted(independent)[int(0.99 * (len(independent) - 1))],
        "worst_independent": [f"{v:.2f} {what}" for v, what in worst[:5]],
    }


# -- the 500-student report ------------------------------------------------------------------

_WORDS = ["graph", "node", "edge", "grad", "value", "order", "seen", "stack", "shape", "op", "out", "tape",
          "inputs", "cache", "plan", "buf", "size", "axis", "ctx", "result"]
_OPS = ["+", "-", "*", "/", "//", "%", "**", "@"]
_COMPARE = ["<", ">", "==", "!=", "<=", ">=", "is", "in"]


def _expression(rng: random.Random, depth: int = 0) -> str:
    kind = rng.randrange(8 if depth < 3 else 2)
    if kind == 0:
        return rng.choice(_WORDS)
    if kind == 1:
        return str(rng.randrange(100))
    if kind == 2:
        args = ", ".join(_expression(rng, depth + 1) for _ in range(rng.randrange(4)))
        return f"{rng.choice(_WORDS)}({args})"
    if kind == 3:
        return f"({_expression(rng, depth + 1)} {rng.choice(_OPS)} {_expression(rng, depth + 1)})"
    if kind == 4:
        return f"{rng.choice(_WORDS)}.{rng.choice(_WORDS)}"
    if kind == 5:
        return f"{rng.choice(_WORDS)}[{_expression(rng, depth + 1)}]"
    if kind == 6:
        return f"[{_expression(rng, depth + 1)} for {rng.choice(_WORDS)} in {_expression(rng, depth + 1)}]"
    return f"{{{_expression(rng, depth + 1)}: {_expression(rng, depth + 1)}}}"


def _block(rng: random.Random, indent: int, depth: int) -> list[str]:
    pad = "    " * indent
    lines = []
    for _ in range(rng.randrange(2, 6)):
        kind = rng.randrange(7 if depth < 2 else 4)
        if kind == 0:
            lines.append(f"{pad}{rng.choice(_WORDS)} = {_expression(rng)}")
        elif kind == 1:
            lines.append(f"{pad}{rng.choice(_WORDS)} {rng.choice(_OPS)}= {_expression(rng)}")
        elif kind == 2:
            lines.append(f"{pad}{rng.choice(_WORDS)}.{rng.choice(_WORDS)}({_expression(rng)})")
        elif kind == 3:
            lines.append(f"{pad}return {_expression(rng)}")
            break
        elif kind == 4:
            lines.append(f"{pad}if {_expression(rng)} {rng.choice(_COMPARE)} {_expression(rng)}:")
            lines += _block(rng, indent + 1, depth + 1)
        elif kind == 5:
            lines.append(f"{pad}for {rng.choice(_WORDS)} in {_expression(rng)}:")
            lines += _block(rng, indent + 1, depth + 1)
        else:
            lines.append(f"{pad}while {_expression(rng)} {rng.choice(_COMPARE)} {_expression(rng)}:")
            lines += _block(rng, indent + 1, depth + 1)
    return lines


def _generated_program(rng: random.Random) -> str:
    """A plausible independent program: a few functions of random statements and expressions."""
    lines = ["import numpy as np", ""]
    for f in range(rng.randrange(3, 6)):
        args = rng.sample(_WORDS, rng.randrange(1, 4))
        lines.append(f"def {rng.choice(_WORDS)}_{f}({', '.join(args)}):")
        lines += _block(rng, 1, 0)
        lines.append("")
    return "\n".join(lines) + "\n"


def _assignment_with_students(programs: list[str]) -> tuple[User, str]:
    """A course of len(programs) students, one assignment of one exercise, each student's
    counted submission one of ``programs``, fingerprinted as the task would."""
    tag = f"sim{time.time_ns()}"
    instructor = User.objects.create_user(username=f"{tag}-teacher", password="a-long-password-1", role="instructor")
    course = Course.objects.create(title_en="Similarity", title_zh="相似度", term="bench", created_by=instructor)
    Membership.objects.create(course=course, user=instructor, role=Membership.Role.INSTRUCTOR)
    exercise = Exercise.objects.create(slug=tag, uid=tag)
    version = ExerciseVersion.objects.create(
        exercise=exercise, number=1, declared_version=1, digest=tag, title_en="Graphs", title_zh="计算图",
        summary_en="s", summary_zh="s", statement_en="s", statement_zh="s", starter="", difficulty="easy",
        points=10, files={},
    )
    now = timezone.now()
    assignment = Assignment.objects.create(
        course=course, title_en="Week 1", title_zh="第一周", opens_at=now, due_at=now + timedelta(days=7),
        late_policy="refuse",
    )
    item = AssignmentItem.objects.create(assignment=assignment, kind="exercise", exercise_version=version, points=10)
    students = User.objects.bulk_create(
        [User(username=f"{tag}-{i}", first_name=f"Student {i}", role="student") for i in range(len(programs))]
    )
    Membership.objects.bulk_create([Membership(course=course, user=u) for u in students])
    submissions = Submission.objects.bulk_create(
        [
            Submission(user=u, exercise_version=version, code=code, status=Submission.Status.GRADED,
                       verdict="ACCEPTED", score=1.0, finished_at=now)
            for u, code in zip(students, programs, strict=True)
        ]
    )
    ItemScore.objects.bulk_create(
        [ItemScore(item=item, user=u, points=10, submission=s) for u, s in zip(students, submissions, strict=True)]
    )
    for s in submissions:
        fingerprint_store(s.id)
    return instructor, f"/similarity/courses/{course.pk}/assignments/{assignment.pk}/"


def render_time() -> dict[str, Any]:
    call_command("migrate", verbosity=0)
    setup_test_environment()
    rng = random.Random(27)
    programs = [_generated_program(rng) for _ in range(STUDENTS - 20)]
    for ring in range(4):
        source = _generated_program(rng)
        programs += [disguise(source, seed=ring * 10 + i) for i in range(5)]
    with transaction.atomic():  # rolled back: the bench leaves its database as it found it
        instructor, url = _assignment_with_students(programs)
        client = Client()
        client.force_login(instructor)
        client.get(url)  # warm: templates compiled
        times, queries, pairs_shown = [], 0, 0
        for _ in range(RUNS):
            with CaptureQueriesContext(connection) as captured:
                started = time.perf_counter()
                response = client.get(url)
                times.append(time.perf_counter() - started)
            assert response.status_code == 200, response.status_code
            queries = len(captured.captured_queries)
            pairs_shown = response.content.count(b'class="pair"')
        transaction.set_rollback(True)
    times.sort()
    return {
        "students": STUDENTS,
        "runs": RUNS,
        "render_p50_s": statistics.median(times),
        "render_max_s": times[-1],
        "queries": queries,
        "pairs_listed": pairs_shown,
        "database": connection.vendor,
    }


def main() -> None:
    threshold = float(os.environ.get("SIMILARITY_THRESHOLD", str(THRESHOLD)))
    started = time.perf_counter()
    result: dict[str, Any] = {"k": K, "window": WINDOW, **quality(threshold)}
    result["quality_seconds"] = round(time.perf_counter() - started, 1)
    if os.environ.get("DATABASE_URL"):
        result["report"] = render_time()
    result["load_average"] = os.getloadavg()[0]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "similarity.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Similarity reports (issue 27)",
        "",
        f"k = {K} tokens, window = {WINDOW}, threshold = {threshold:.0%} of the smaller program's fingerprints.",
        "",
        "| what | measured | target |",
        "|---|---|---|",
        f"| recall on disguised copies (renamed, reordered, comments and dead code, loops rewritten): "
        f"{result['disguised_copies']} copies of {result['originals'] - len(result['too_short'])} solutions and "
        f"mutants of {result['exercises']} exercises ({len(result['too_short'])} more are too short to compare) "
        f"| {result['recall']:.1%} (score median {result['copy_score_median']:.2f}, "
        f"min {result['copy_score_min']:.2f}) | ≥ 95 % |",
        f"| false pairs among independent files (solution, mutants, starter of two different exercises): "
        f"{result['independent_pairs']} pairs | {result['false_pairs']} ({result['false_pair_rate']:.2%}; "
        f"p99 score {result['independent_score_p99']:.2f}) | ≤ 5 % |",
    ]
    if "report" in result:
        r = result["report"]
        lines.append(
            f"| a {r['students']}-student assignment's report, rendered by its instructor ({r['database']}, "
            f"{r['runs']} runs) | p50 {r['render_p50_s'] * 1000:.0f} ms, max {r['render_max_s'] * 1000:.0f} ms, "
            f"{r['queries']} queries, {r['pairs_listed']} pairs listed | < 1 s |"
        )
    lines += ["", f"Too short to compare (< {MIN_PRINTS} fingerprints beyond the starter): "
              + ", ".join(result["too_short"])]
    lines += ["", "Closest independent pairs: " + "; ".join(result["worst_independent"]), ""]
    if result["missed"]:
        lines += ["Missed copies: " + "; ".join(result["missed"]), ""]
    lines += [f"Load average at the end: {result['load_average']:.1f}.", ""]
    (RESULTS / "similarity.md").write_text("\n".join(lines))
    print("\n".join(lines))
