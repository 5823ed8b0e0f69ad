from numtheory import digit_sum, fibonacci, gcd, is_prime, lcm, primes_upto


def test_gcd():
    assert gcd(12, 18) == 6
    assert gcd(7, 0) == 7


def test_lcm():
    assert lcm(4, 6) == 12


def test_lcm_zero():
    assert lcm(0, 5) == 0


def test_small_primes():
    assert is_prime(2) and is_prime(3)
    assert not is_prime(1) and not is_prime(0)


def test_square_is_not_prime():
    assert not is_prime(9) and not is_prime(25)


def test_primes_upto():
    assert primes_upto(20) == [2, 3, 5, 7, 11, 13, 17, 19]


def test_digit_sum():
    assert digit_sum(1234) == 10
    assert digit_sum(-56) == 11


def test_fibonacci():
    assert fibonacci(7) == [0, 1, 1, 2, 3, 5, 8]


def test_fibonacci_empty():
    assert fibonacci(0) == []
