"""The comparison helpers exercise authors use, and the wire that carries student values."""
from __future__ import annotations

import inspect
import io
import pickle

import numpy as np
import pytest

from grader import contract
from grader.harness import CheckFailed, ProgramError, as_code, close, equal, fail, localize, messages, raises, wire
from grader.harness import api as api_module


def message_of(function, *args, **kwargs) -> str:
    with pytest.raises(CheckFailed) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def test_close_accepts_float_noise_within_the_dtype_tolerance():
    close({"a": 1.0, "b": [2, 3.0]}, {"a": 1.0 + 1e-9, "b": [2, 3.0]})
    close(np.float32([1, 2]) + np.float32(1e-7), np.float32([1, 2]))


def test_an_integer_answer_is_exact_unless_the_check_gives_a_tolerance():
    close(10.0, 10)  # an integral float is that integer
    assert message_of(close, 10**9 + 50.0, 10**9) == "result: expected 1000000000, got 1000000050.0"
    assert "expected 3" in message_of(close, 3.5, 3)
    assert "expected 3" in message_of(close, float("nan"), 3)
    close(3.5, 3, atol=1.0)  # a tolerance the check asks for is the check's to give


def test_close_names_the_key_that_differs():
    assert message_of(close, {"z": 8, "pred": 0}, {"z": 8, "pred": 1}) == "result['pred']: expected 1, got 0"
    assert message_of(close, {"z": 8}, {"z": 8, "pred": 1}) == "result is missing key 'pred'"


def test_arrays_must_match_shape_dtype_and_nan_positions():
    want = np.array([1.0, np.nan, 3.0])
    assert "expected shape (3,)" in message_of(close, np.zeros(2), want)
    assert "expected dtype float64, got float32" in message_of(close, want.astype(np.float32), want)
    assert "NaN positions differ, first at index (1,)" in message_of(close, np.array([1.0, 2.0, 3.0]), want)
    close(np.array([1.0, np.nan, 3.0]), want)
    message = message_of(close, np.array([1.0, np.nan, 3.5]), want)
    assert "1 of 3 elements differ" in message and "index (2,)" in message


def test_equal_is_exact():
    close(0.1 + 0.2, 0.3)
    assert "expected 0.3" in message_of(equal, 0.1 + 0.2, 0.3)


def test_raises_wants_the_error_to_name_something():
    with raises("scale"):
        raise ProgramError("student", "ValueError", "op needs 'scale'")
    with pytest.raises(CheckFailed, match="should mention 'cycle'"):
        with raises("cycle"):
            raise ProgramError("student", "RuntimeError", "something broke")
    with pytest.raises(CheckFailed, match="returned normally"):
        with raises():
            pass


def row_of(function, *args, **kwargs) -> dict:
    with pytest.raises(CheckFailed) as caught:
        function(*args, **kwargs)
    return caught.value.reason.row_fields()


def test_fail_carries_the_checks_words_in_every_language_with_the_same_values():
    text = {"en": "expected {n} kernels, got {k!r}", "zh-hans": "应有 {n} 个内核，实际为 {k!r} 个"}
    row = row_of(fail, text, n=3, k=4)
    assert row == {
        "message": "expected 3 kernels, got 4",
        "message_id": "check.failed",
        "message_params": {"detail": {"en": "expected 3 kernels, got 4", "zh-hans": "应有 3 个内核，实际为 4 个"}},
    }


@pytest.mark.parametrize("text, complaint", [
    ("expected 3 kernels", "give the text in every language"),
    ({"en": "expected {n} kernels"}, "has no zh-hans"),
    ({"en": "expected {n}", "zh-hans": "应有 {count}"}, "every language needs the same placeholders"),
    ({"en": "x", "zh-hans": "x", "fr": "x"}, "unknown languages"),
])
def test_fail_refuses_a_text_without_chinese_or_with_other_placeholders(text, complaint):
    # Not a CheckFailed (the student's fault) but an error of the exercise: the judge reports it as its own.
    with pytest.raises(messages.UntranslatedText, match=complaint):
        fail(text, n=3, count=3)
    assert not issubclass(messages.UntranslatedText, Exception)


def test_a_comparison_names_the_value_in_every_language_and_keeps_the_data_apart():
    what = localize({"en": "{what}: the output", "zh-hans": "{what}：输出"}, what=as_code("f(x)"))
    row = row_of(close, {"z": [1.0, 2.0]}, {"z": [1.0, 2.5]}, what=what)
    assert row["message_id"] == "compare.difference"
    assert row["message_params"] == {
        "what": {"en": "`f(x)`: the output['z'][1]", "zh-hans": "`f(x)`：输出['z'][1]"},
        "expected": "2.5", "got": "2.0", "difference": "0.5",
    }
    assert row["message"] == "`f(x)`: the output['z'][1]: expected 2.5, got 2.0 (difference 0.5)"
    keyed = row_of(close, {"z": 1}, {"z": 2}, what=as_code("execute(feed)"))["message_params"]["what"]
    assert keyed == {"en": "`execute(feed)['z']`", "zh-hans": "`execute(feed)['z']`"}  # the key inside the code
    assert row_of(equal, 1, 2)["message_params"]["what"] == {"en": "result", "zh-hans": "结果"}
    with pytest.raises(messages.UntranslatedText):
        close(1.0, 2.0, what="the output")


def test_a_failure_during_a_timed_call_says_which_call_in_every_language():
    with pytest.raises(CheckFailed) as caught:
        equal(1, 2)
    within = caught.value.reason.within(localize(messages.PHRASES["timed_call"], n=4))
    assert within.params["what"] == {"en": "timed call 4: result", "zh-hans": "第 4 次计时调用：结果"}


def test_every_phrase_of_the_api_is_in_every_language_with_the_same_placeholders():
    for phrase in messages.PHRASES.values():
        assert messages.check_localized(phrase) == phrase


def test_a_value_is_described_as_code_not_as_english():
    row = row_of(close, np.zeros(3, dtype=np.float32), np.zeros(3))
    assert row["message_params"]["expected"] == "float64" and row["message_params"]["got"] == "float32"
    row = row_of(close, [1], np.zeros(3))
    assert row["message_params"]["got"] == "[1]" and row["message_id"] == "compare.not_an_array"
    row = row_of(close, np.zeros(2), {"a": 1})
    assert row["message_params"]["got"] == "array(shape=(2,), dtype=float64)"


def nested(depth):
    tree = []
    for _ in range(depth):
        tree = [tree]
    return tree


def decode(tree, blobs):
    return wire.Decoder(blobs, handle=lambda tag: ("handle", tag["h"])).decode(tree)


def test_the_wire_round_trips_plain_data_and_arrays():
    encoder = wire.Encoder(lambda value, _: pytest.fail(f"unexpected {value!r}"))
    value = {"t": (1, 2.5, "x", None, True), 3: [np.arange(4, dtype=np.int16)], "s": np.float32(1.5)}
    back = decode(encoder.encode(value), encoder.blobs)
    assert back["t"] == (1, 2.5, "x", None, True) and back["s"] == np.float32(1.5) and back["s"].dtype == np.float32
    assert back[3][0].dtype == np.int16 and list(back[3][0]) == [0, 1, 2, 3]


def test_a_student_dict_subclass_cannot_lie_about_its_items():
    class Liar(dict):
        def items(self):
            return [("pred", 1)]

        def __eq__(self, other):
            return True

    encoder = wire.Encoder(lambda value, _: {"$": "handle", "h": 1})
    assert decode(encoder.encode(Liar(pred=0)), encoder.blobs) == {"pred": 0}


def test_the_wire_refuses_pickles_and_unknown_tags():
    pickled = io.BytesIO()
    np.save(pickled, np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(wire.ProtocolError, match="cannot be sent"):
        decode({"$": "ndarray", "i": 0}, [pickled.getvalue()])
    with pytest.raises(wire.ProtocolError):
        decode({"$": "pickle", "v": pickle.dumps(1).hex()}, [])
    with pytest.raises(wire.ProtocolError, match="nested too deeply"):
        decode(nested(100_000), [])


def test_a_torn_frame_is_a_protocol_error():
    frame = wire.frame_bytes({"ok": True}, [b"abc"])
    with pytest.raises(EOFError):
        wire.read_frame(io.BytesIO(frame[:-1]))
    with pytest.raises(wire.ProtocolError):
        wire.read_frame(io.BytesIO((10).to_bytes(4, "big") + b"not json!!"))


def test_the_decorators_take_the_arguments_the_contract_names():
    """The host reads cases from checks.py's syntax tree by the contract's names: they must be these."""
    for name, arguments in contract.CASE_DECORATORS.items():
        parameters = inspect.signature(getattr(api_module, name)).parameters.values()
        parameters = inspect.signature(getattr(api_module, name)).parameters.values()
        taken = {p.name for p in parameters if p.kind != p.VAR_KEYWORD}
        assert taken == arguments, name
