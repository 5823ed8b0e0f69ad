"""The maths verifier: a reply's final answer against a gold answer, as equal values.

`verifier.py` holds `MathVerifier` and the order of the steps; `extract.py` / `spans.py` pull
the answer out of the reply; `normalize.py` (with `unicode.py`, `words.py`) cleans both sides;
`compare.py` decides equality (`exact.py`, `numeric.py`, `structure.py`, `sets.py`,
`polynomial.py`, `power.py`, `tokens.py` hold its rules); `commitments.py` finds a reply that
commits to two answers (a hedge). docs/rewards-math.md has the rules. Modules inside this
package import each other by module, never this face, so that the face can list them all.
"""

from rlvr.rewards.math.commitments import find_hedge
from rlvr.rewards.math.extract import DEFAULT_EXTRACT, extract_answer, extract_boxed
from rlvr.rewards.math.verifier import MathVerifier, hedge_verdict

__all__ = ["DEFAULT_EXTRACT", "MathVerifier", "extract_answer", "extract_boxed", "find_hedge", "hedge_verdict"]
