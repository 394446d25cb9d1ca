import pytest
from calc import average, spread


def test_average_of_three_numbers() -> None:
    assert average([1, 2, 3]) == 2


def test_average_of_one_number() -> None:
    assert average([5]) == 5


def test_average_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        average([])


def test_spread() -> None:
    assert spread([3, 9, 4]) == 6
