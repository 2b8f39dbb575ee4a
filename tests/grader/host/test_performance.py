"""One number for a submission's speed, and how every page prints a ratio."""
import pytest

from grader.host.performance import interval_text, ratio_text


@pytest.mark.parametrize("value, text", [
    (0.08741, "0.087"), (0.98412, "0.98"), (0.996, "1.0"), (1.0, "1.0"), (1.2449, "1.2"), (9.96, "10"),
    (12.3, "12"), (123.4, "120"), (None, ""), (0.0, ""), (float("nan"), ""), (float("inf"), ""),
])
def test_a_ratio_has_two_significant_digits(value, text):
    assert ratio_text(value) == text


def test_a_ratio_with_its_interval():
    assert interval_text(0.98412, 0.84611, 1.10432) == "0.98× (0.85–1.1)"
    assert interval_text(2.0, None, None) == "2.0×"
    assert interval_text(None, 0.5, 1.0) == ""
