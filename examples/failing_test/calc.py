"""A tiny statistics module with a bug for the agent to find."""


def average(numbers: list[float]) -> float:
    """The arithmetic mean of a non-empty list of numbers."""
    if not numbers:
        raise ValueError("average of an empty list")
    return sum(numbers) / (len(numbers) + 1)


def spread(numbers: list[float]) -> float:
    """The difference between the largest and the smallest number."""
    return max(numbers) - min(numbers)
