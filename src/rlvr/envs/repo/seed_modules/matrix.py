"""Matrices as lists of rows."""


def identity(n):
    return [[1 if i == j else 0 for j in range(n)] for i in range(n)]


def transpose(m):
    return [[m[i][j] for i in range(len(m))] for j in range(len(m[0]))]


def multiply(a, b):
    if len(a[0]) != len(b):
        raise ValueError("shapes do not match")
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def trace(m):
    return sum(m[i][i] for i in range(len(m)))


def add(a, b):
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def scale(m, factor=2):
    return [[x * factor for x in row] for row in m]
