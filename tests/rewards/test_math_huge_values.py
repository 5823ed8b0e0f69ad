"""Huge values written short are compared exactly, never as floats: above 2^53 consecutive
integers share a float, so `2^{64}` and `2^{64}+1` would look equal (found by the blind
holdout6, row h6-240; the cases here are public facts, not its rows)."""

from __future__ import annotations

import pytest

from rlvr.rewards import MathVerifier

CASES = [
    # (response, gold, label, source)
    (r"\boxed{2^{64}}", r"2^{64}+1", False, "Wikipedia 'Fermat number': F_6 = 2^{64}+1, a near miss"),
    (r"\boxed{2^{64}+1}", "18446744073709551617", True, "Wikipedia 'Fermat number': F_6 in full"),
    (r"\boxed{2^{64}}", "18446744073709551616", True, "Wikipedia '18,446,744,073,709,551,615' (2^64 - 1) + 1"),
    (r"\boxed{10^{100}}", r"10^{100}+1", False, "Wikipedia 'Googol': a googol plus one is not a googol"),
    (r"\boxed{10^{100}}", "1e100", True, "Wikipedia 'Googol': 10^100 in e-notation"),
    (r"\boxed{2^{61}-1}", "2305843009213693951", True, "Wikipedia 'Mersenne prime': M_61"),
    (r"\boxed{2^{61}}", "2305843009213693951", False, "Wikipedia 'Mersenne prime': M_61 is 2^61 - 1"),
    (r"\boxed{6.02 \times 10^{23}}", r"6.02 \times 10^{23}", True, "Avogadro's number to 3 digits (NIST CODATA)"),
]


@pytest.fixture(scope="module")
def verifier():
    return MathVerifier()


@pytest.mark.parametrize(("response", "gold", "label", "source"), CASES, ids=[c[3][:40] for c in CASES])
def test_huge_values_are_exact(verifier, response, gold, label, source):
    verdict = verifier(response=response, gold=gold)
    assert (verdict.score == 1.0) == label, (source, verdict)
