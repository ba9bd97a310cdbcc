# SPDX-License-Identifier: BSD-2-Clause
import pytest

from syncq_report import fmt


@pytest.mark.parametrize(
    "value, text",
    [
        (0, "0"),
        (5, "5.00"),
        (0.62, "0.620"),
        (0.001234, "0.00123"),
        (0.0001234, "1.23e-4"),
        (12345, "12300"),
        (99949, "99900"),
        (99999, "1.00e5"),
        (123456, "1.23e5"),
        (-42.42, "-42.4"),
    ],
)
def test_num_keeps_three_significant_digits(value, text):
    assert fmt.num(value) == text


def test_params_sorted_and_integral_floats_plain():
    assert fmt.params({"work_ns": 0, "threads": 4.0, "mode": "spin"}) == "mode=spin, threads=4, work_ns=0"
    assert fmt.params({"threads": 4, "work_ns": 0}, skip=("threads",)) == "work_ns=0"


def test_unique_slugs_keep_colliding_names_apart():
    assert fmt.unique_slugs(["a b", "a/b", "np99-counter"]) == {
        "a b": "a-b",
        "a/b": "a-b-2",
        "np99-counter": "np99-counter",
    }


@pytest.mark.parametrize(
    "value, text", [(0.4, "0.4"), (1, "1"), (10000, "10000"), (2e5, "2e5"), (1.5e-5, "1.5e-5")]
)
def test_num_trimmed_for_axis_ticks(value, text):
    assert fmt.num(value, trim=True) == text
