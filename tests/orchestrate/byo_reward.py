"""A reward function that asks for a dataset's extra column by keyword (named in the e2e test
as `reward.function = "byo_reward:parity"`, with this folder on sys.path)."""

CALLS: list[int] = []


def parity(response, gold, difficulty):
    """1 when the response's length has the parity of the row's `difficulty` column: a reward
    with variance on a random model, that cannot be computed without the extra column."""
    if not isinstance(difficulty, int):
        raise TypeError(f"difficulty should be the column's integer, got {difficulty!r}")
    CALLS.append(difficulty)
    return float(len(response) % 2 == difficulty % 2)
