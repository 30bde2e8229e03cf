"""The tree budgets a lab compares, as its command and the app's field take them."""

from __future__ import annotations

import pytest

from specviz.drafters.tree_growth import MAX_NODES, budgets_of
from specviz.text import UserError


def test_budgets_are_sorted_without_repeats() -> None:
    assert budgets_of(" 32, 8,16,8 ") == (8, 16, 32)
    assert budgets_of(str(MAX_NODES)) == (MAX_NODES,)


@pytest.mark.parametrize("text", ["", " , ", "8,x", "0", str(MAX_NODES + 1), "-4", "8.5"])
def test_a_bad_budget_list_says_what_it_takes(text: str) -> None:
    with pytest.raises(UserError) as raised:
        budgets_of(text)
    assert raised.value.key == "error.tree_budgets"
    message = raised.value.message("en")
    assert "8,16,32" in message and str(MAX_NODES) in message and repr(text) in message
    assert "8,16,32" in raised.value.message("ja")
