"""The code verifier: run a reply's program against tests in the sandbox (`rewards/sandbox/`).

`verifier.py` holds `CodeVerifier`; `tests.py` the test cases a task gives; `outcomes.py`
reads the records the sandbox sends back; `harness.py`, `modules.py`, `items.py` and
`codec.py` are joined into the program that runs inside the sandbox (standard library only);
`attacks.py` / `attacks_escape.py` are the code section of the reward-hack suite
(`rewards/attacks.py`). docs/rewards-code.md has the rules. Modules inside this package import
each other by module, never this face.
"""

from rlvr.rewards.code.tests import CallCase, CodeTests, IOCase
from rlvr.rewards.code.verifier import CodeVerifier, extract_code

__all__ = ["CallCase", "CodeTests", "CodeVerifier", "IOCase", "extract_code"]
