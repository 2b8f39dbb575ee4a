"""Fingerprints on normalised token streams, winnowing, and how pairs are scored."""

import random
from pathlib import Path

from similarity.fingerprints import MIN_PRINTS, WINDOW, K, clusters, fingerprint, pairs, score, tokens, winnow

EXERCISES = Path(__file__).resolve().parents[3] / "exercises" / "coding"
SCALAR = (EXERCISES / "scalar-autograd" / "solution.py").read_text()
EXECUTOR = (EXERCISES / "static-graph-executor" / "solution.py").read_text()


def hashes(code: str, **kw) -> set[int]:
    return {p.hash for p in fingerprint(code, **kw)}


def test_names_literals_comments_and_docstrings_do_not_change_the_tokens():
    original = 'def area(width, height):\n    """Area."""\n    return width * height + 1  # plus one\n'
    disguised = (
        "# a helper\n\ndef surface(w,   h):\n    '''Computes it.'''\n\n    return w * h + 7   # seven\n"
    )
    assert [t.text for t in tokens(original)] == [t.text for t in tokens(disguised)]
    assert [t.text for t in tokens(original)][:4] == ["def", "N", "(", "N"]
    assert "S" in [t.text for t in tokens("x = 'a string'\n")]


def test_structure_still_counts():
    inside = [t.text for t in tokens("for x in y:\n    z(x)\n")]
    assert inside != [t.text for t in tokens("z(y)\nfor x in y:\n    pass\n")]


def test_code_that_does_not_tokenize_is_still_fingerprinted():
    broken = SCALAR + "\ndef oops(:\n    return '''never closed\n"
    assert score(hashes(SCALAR), hashes(broken)).score > 0.5


def test_winnowing_keeps_the_rightmost_minimum_of_every_window():
    rng = random.Random(1)
    values = [rng.randrange(50) for _ in range(200)]
    kept = winnow(values, 4)
    for start in range(len(values) - 3):
        window = range(start, start + 4)
        lowest = min(values[i] for i in window)
        assert max(i for i in window if values[i] == lowest) in kept
    assert kept == sorted(set(kept))
    assert winnow([], 4) == [] and winnow([3, 1, 2], 4) == [1]


def test_a_long_enough_shared_run_always_leaves_a_shared_fingerprint():
    shared = "total = total + weights[index] * inputs[index] - bias\n" * 3
    a = "import os\nprint(os.getcwd())\n" + shared
    b = "for q in range(3):\n    yield q\n" + shared + "raise SystemExit\n"
    assert len(tokens(shared)) >= K + WINDOW - 1
    assert hashes(a) & hashes(b)


def test_a_copy_with_names_changed_and_dead_code_added_scores_full():
    copy = SCALAR.replace("other", "rhs").replace("out", "result").replace("self", "me")
    copy += "\n\ndef unused(a, b=None):\n    # never called\n    if b is None:\n        b = []\n    return b\n"
    assert score(hashes(SCALAR), hashes(copy)).score == 1.0
    assert score(hashes(SCALAR), hashes(EXECUTOR)).score < 0.2


def test_the_starter_is_left_out():
    starter = (EXERCISES / "scalar-autograd" / "starter.py").read_text()
    assert hashes(starter, ignore=hashes(starter)) == set()
    assert not hashes(SCALAR, ignore=hashes(starter)) & hashes(starter)


def test_pairs_above_the_threshold_best_first_and_their_clusters():
    copy = SCALAR.replace("other", "rhs")
    docs = {1: hashes(SCALAR), 2: hashes(copy), 3: hashes(EXECUTOR), 4: hashes(copy + "\nprint(1)\n")}
    found = pairs(docs, threshold=0.5)
    assert {(p.a, p.b) for p in found} == {(1, 2), (1, 4), (2, 4)}
    assert all(p.score == 1.0 for p in found)
    assert clusters(found) == [[1, 2, 4]]


def test_short_programs_and_idioms_everyone_shares_are_not_pairs():
    tiny = "def f(x):\n    return x + 1\n"
    assert len(hashes(tiny)) < MIN_PRINTS
    assert pairs({1: hashes(tiny), 2: hashes(tiny)}, threshold=0.1) == []
    # A fingerprint held by more than half of many programs is the task's idiom, not a copy.
    idiom = hashes(SCALAR)
    docs = {i: idiom | {1000 * i + j for j in range(20)} for i in range(30)}
    assert pairs(docs, threshold=0.1) == []
