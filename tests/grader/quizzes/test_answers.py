"""Answer checking for every question type, parameter draws, and untrusted forms."""
import pytest

from grader.quizzes import Choice, Param, Question, ResponseError, display, instantiate, is_correct, parse_response


def question(**fields) -> Question:
    base = dict(id="q", bank="b", type="single", difficulty="easy", topic="autograd", frameworks=("pytorch",),
                pitfall="", text={"en": "?", "zh-hans": "？"}, explanation={"en": ".", "zh-hans": "。"},
                reference="https://example.org")
    return Question(**{**base, **fields})


def abc(*ids):
    return tuple(Choice(i, {"en": i.upper(), "zh-hans": i.upper()}) for i in ids)


def answer(q: Question, fields: dict, seed: int = 1) -> bool:
    snapshot = instantiate(q, seed)
    return is_correct(snapshot, parse_response(snapshot, fields))


@pytest.mark.parametrize(
    ("q", "right", "wrong"),
    [
        (question(choices=abc("a", "b", "c"), answer="b"), {"answer": ["b"]}, {"answer": ["a"]}),
        (question(type="multiple", choices=abc("a", "b", "c"), answer=["a", "c"]),
         {"answer": ["c", "a"]}, {"answer": ["a"]}),
        (question(type="true_false", answer=False), {"answer": ["false"]}, {"answer": ["true"]}),
        (question(type="numeric", answer=2.5, tolerance=0.1), {"answer": ["2,45"]}, {"answer": ["2.7"]}),
        (question(type="ordering", choices=abc("x", "y", "z"), answer=["z", "x", "y"]),
         {"rank-z": ["1"], "rank-x": ["2"], "rank-y": ["3"]}, {"rank-x": ["1"], "rank-y": ["2"], "rank-z": ["3"]}),
        (question(type="short_text", answer="detach", accept=("x.detach()",), patterns=(r"^\.?detach(\(\))?$",)),
         {"answer": ["  Detach() "]}, {"answer": ["data"]}),
        (question(type="code_output", code="print(1)", answer="[1.0,  2.0]\n"),
         {"answer": ["[1.0, 2.0]\r\n\n"]}, {"answer": ["[1, 2]"]}),
        (question(type="code_output", code="print(1)", choices=abc("a", "b"), answer="a"),
         {"answer": ["a"]}, {"answer": ["b"]}),
    ],
    ids=["single", "multiple", "true_false", "numeric", "ordering", "short_text", "code_output", "code_choices"],
)
def test_each_type_accepts_the_right_answer_and_refuses_a_wrong_one(q, right, wrong):
    assert answer(q, right) is True
    assert answer(q, wrong) is False


def test_a_blank_answer_is_none_and_wrong():
    q = question(type="numeric", answer=1.0)
    snapshot = instantiate(q, 0)
    assert parse_response(snapshot, {"answer": ["  "]}) is None
    assert is_correct(snapshot, None) is False


@pytest.mark.parametrize(
    ("q", "fields"),
    [
        (question(choices=abc("a", "b"), answer="a"), {"answer": ["zz"]}),
        (question(choices=abc("a", "b"), answer="a"), {"answer": ["a", "b"]}),
        (question(type="multiple", choices=abc("a", "b"), answer=["a"]), {"answer": ["a", "evil"]}),
        (question(type="true_false", answer=True), {"answer": ["yes"]}),
        (question(type="numeric", answer=1.0), {"answer": ["nan"]}),
        (question(type="numeric", answer=1.0), {"answer": ["one"]}),
        (question(type="ordering", choices=abc("x", "y", "z"), answer=["x", "y", "z"]),
         {"rank-x": ["1"], "rank-y": ["1"], "rank-z": ["2"]}),
        (question(type="short_text", answer="a"), {"answer": ["x" * 5000]}),
    ],
    ids=["unknown-choice", "two-singles", "unknown-multi", "not-bool", "nan", "not-number", "same-rank", "huge"],
)
def test_a_tampered_form_is_refused(q, fields):
    with pytest.raises(ResponseError):
        parse_response(instantiate(q, 0), fields)


def test_parameters_are_drawn_per_seed_and_the_answer_follows_them():
    q = question(type="numeric", params=(Param("n", tuple(range(2, 50))),), answer_expr="n * 3",
                 text={"en": "Triple ${n}", "zh-hans": "${n} 的三倍"})
    snapshots = [instantiate(q, seed) for seed in range(20)]
    assert instantiate(q, 7) == snapshots[7]  # reproducible
    assert len({s["params"]["n"] for s in snapshots}) > 5
    for s in snapshots:
        n = s["params"]["n"]
        assert s["text"] == {"en": f"Triple {n}", "zh-hans": f"{n} 的三倍"}
        assert is_correct(s, parse_response(s, {"answer": [str(3 * n)]}))
        assert not is_correct(s, parse_response(s, {"answer": [str(3 * n + 1)]}))


def test_ordering_items_are_never_shown_in_the_right_order():
    q = question(type="ordering", choices=abc("a", "b", "c"), answer=["a", "b", "c"])
    assert all([c["id"] for c in instantiate(q, seed)["choices"]] != ["a", "b", "c"] for seed in range(50))


def test_display_words_the_answer():
    q = question(type="multiple", choices=abc("a", "b", "c"), answer=["a", "c"])
    snapshot = instantiate(q, 0)
    assert display(snapshot, snapshot["key"]["answer"], "en") == "A; C"
    numeric = instantiate(question(type="numeric", answer=2.0, tolerance=0.5), 0)
    assert display(numeric, 2.0, "en", expected=True) == "2 (± 0.5)"
