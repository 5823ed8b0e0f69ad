"""The tests of a test file (see `code/modules.py`): collected by id, and run one by id.

Stdlib only, no `from __future__`: joined after `code/modules.py` into the sandbox program.

Ids: `test_f`, `test_f[1-2]` (parametrize: the values, or `ids`, or `pytest.param(id=...)`),
`TestGroup::test_m`, `SomeCase::test_m` (unittest). A skip or skipif mark, like a skip
raised inside the test, makes the test fail; other marks (xfail included) are ignored, so an
xfail test counts as the plain test it is.
"""

import types

if __name__ != "__main__":  # imported by rlvr; inside the sandbox program these are joined in
    from rlvr.rewards.code.harness import (
        Channel, _unless_broken, describe, read_secret, start_checked, write_record,
    )  # fmt: skip
    from rlvr.rewards.code.modules import (
        TEST_MODULE, CollectError, Failed, Param, Skipped, load_tests,
    )  # fmt: skip

_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR


def collect(namespace: dict, style: str) -> list:
    """[(test id, run)] in file order; `run()` runs the test and raises unless it passed."""
    import sys

    unittest = sys.modules.get("unittest")
    module_fixtures = _fixtures(namespace.values())
    items = []
    for name, obj in list(namespace.items()):
        if getattr(obj, "__test__", True) is False or not _own(obj):
            continue
        if unittest is not None and isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            loader = unittest.TestLoader()
            items += [(f"{name}::{m}", _case_runner(obj, m)) for m in loader.getTestCaseNames(obj)]
        elif style != "pytest":
            continue
        elif type(obj) is types.FunctionType and name.startswith("test"):
            items += _function_items(name, obj, None, namespace, module_fixtures)
        elif isinstance(obj, type) and name.startswith("Test") and "__init__" not in vars(obj):
            fixtures = {**module_fixtures, **_fixtures(vars(obj).values())}
            for method, function in _test_methods(obj):
                items += _function_items(method, function, obj, namespace, fixtures)
    ids = [test_id for test_id, _ in items]
    if len(set(ids)) != len(ids):
        raise CollectError(f"two tests have one id: {sorted({i for i in ids if ids.count(i) > 1})[:3]}")
    return items


def _own(obj) -> bool:
    """Defined by the test file itself (not imported, never a proxy of the candidate's)."""
    return type(obj) in (types.FunctionType, type) and getattr(obj, "__module__", "") == TEST_MODULE


def _fixtures(objects) -> dict:
    return {
        obj.rlvr_fixture["name"]: obj
        for obj in objects
        if type(obj) is types.FunctionType and isinstance(getattr(obj, "rlvr_fixture", None), dict)
    }


def _test_methods(cls) -> list:
    """[(name, function)] of the class's `test*` methods, its own first, then inherited ones."""
    found = {}
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            if name.startswith("test") and type(value) is types.FunctionType:
                found.setdefault(name, value)
    return list(found.items())


def _arg_names(function, method: bool = False) -> list:
    """The arguments pytest would fill (those without defaults; `self` aside)."""
    if type(function) is types.MethodType:
        function, method = function.__func__, True
    parts = function.__qualname__.split(".")
    method = method or (len(parts) > 1 and parts[-2] != "<locals>")  # a fixture in a class
    code = function.__code__
    names = list(code.co_varnames[: code.co_argcount])
    names = names[: len(names) - len(function.__defaults__ or ())]
    return names[1:] if method else names


def _function_items(name, function, cls, namespace, fixtures) -> list:
    prefix = f"{cls.__name__}::" if cls else ""
    marks = [*_marks(namespace.get("pytestmark")), *_marks(getattr(cls, "pytestmark", None))]
    marks += _marks(getattr(function, "pytestmark", None))
    items = []
    for suffix, values, case_marks in _expand(f"{prefix}{name}", marks):
        test_id = f"{prefix}{name}{suffix}"
        all_marks = marks + case_marks
        wanted = [n for n in _arg_names(function, cls is not None) if n not in values]
        wanted += [n for m in all_marks if m.name == "usefixtures" for n in m.args]
        wanted += [n for n, f in fixtures.items() if f.rlvr_fixture["autouse"] and n not in wanted]
        _check_fixtures(test_id, wanted, fixtures, ())
        test = _TestCall(namespace, cls, name, values, all_marks, fixtures, wanted)
        items.append((test_id, test.run))
    return items


def _marks(value) -> list:
    if value is None:
        return []
    return [m for m in (value if isinstance(value, (list, tuple)) else [value]) if hasattr(m, "name")]


def _check_fixtures(test_id: str, names, fixtures: dict, chain: tuple) -> None:
    for name in names:
        if name in chain:
            raise CollectError(f"{test_id}: fixture {name!r} depends on itself")
        if name not in fixtures:
            raise CollectError(
                f"{test_id} needs fixture {name!r}, which the file does not define (rlvr's "
                "pytest subset has no built-in fixtures)"
            )
        fixture = fixtures[name]
        if fixture.rlvr_fixture["params"] is not None:
            raise CollectError(f"{test_id}: fixture {name!r} has params (not supported)")
        _check_fixtures(test_id, _arg_names(fixture), fixtures, (*chain, name))


def _expand(test_id: str, marks: list) -> list:
    """[(id suffix, {argname: value}, marks of the case)]: the product of the parametrize marks
    (the decorator nearest the function first in the id, varying slowest)."""
    cases = [([], {}, [])]
    for mark in marks:
        if mark.name == "parametrize":
            rows = _rows(test_id, mark)
            cases = [(i + [ri], {**v, **rv}, m + rm) for i, v, m in cases for ri, rv, rm in rows]
    out, seen = [], {}
    for ids, values, case_marks in cases:
        suffix = f"[{'-'.join(ids)}]" if ids else ""
        seen[suffix] = seen.get(suffix, -1) + 1
        if seen[suffix]:  # pytest, too, numbers repeated ids
            suffix = f"{suffix[:-1]}{seen[suffix]}]"
        out.append((suffix, values, case_marks))
    return out


def _rows(test_id: str, mark) -> list:
    args = list(mark.args) + [mark.kwargs.get(k) for k in ("argnames", "argvalues")[len(mark.args) :]]
    names, values = args[0], args[1]
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    ids, rows = mark.kwargs.get("ids"), []
    for index, value in enumerate(values):
        param = value if isinstance(value, Param) else None
        row = param.values if param else (value,) if len(names) == 1 else tuple(value)
        if len(row) != len(names):
            raise CollectError(f"{test_id}: parametrize row {index} has {len(row)} values for {names}")
        if param is not None and param.id is not None:
            row_id = str(param.id)
        elif isinstance(ids, (list, tuple)) and index < len(ids) and ids[index] is not None:
            row_id = str(ids[index])
        else:
            row_id = "-".join(_value_id(v, n, index) for v, n in zip(row, names))
        rows.append((row_id, dict(zip(names, row)), param.marks if param else []))
    if not rows:
        raise CollectError(f"{test_id}: parametrize with no values")
    return rows


def _value_id(value, name: str, index: int) -> str:
    if type(value) in (int, float, bool, complex, type(None)):
        return str(value)
    if type(value) is str:
        return value.encode("unicode_escape").decode("ascii")
    return f"{name}{index}"


class _TestCall:
    """One collected pytest-style test: skip marks, setup, fixtures, the call, teardown."""

    def __init__(self, namespace, cls, name, values, marks, fixtures, wanted):
        self.namespace, self.cls, self.name, self.values = namespace, cls, name, values
        self.marks, self.fixtures, self.wanted = marks, fixtures, wanted

    def run(self) -> None:
        for mark in self.marks:
            condition = mark.args[0] if mark.args else mark.kwargs.get("condition", True)
            if mark.name == "skip" or (mark.name == "skipif" and condition):
                if isinstance(condition, str):
                    raise Failed("skipif with a string condition is not supported")
                raise Skipped(str(mark.kwargs.get("reason", "skip mark")))
        instance = self.cls() if self.cls else None
        hooks = ("setup_method", "teardown_method") if instance else ("setup_function", "teardown_function")
        owner = instance if instance is not None else None
        function = getattr(instance, self.name) if instance else self.namespace[self.name]
        finalizers = []
        try:
            self._hook("setup_module", "setup_class", hooks[0], owner, function)
            cache = {}
            kwargs = {n: self._fixture(n, instance, cache, finalizers) for n in self.wanted}
            kwargs = {n: v for n, v in kwargs.items() if n in _arg_names(function)}
            if function.__code__.co_flags & _GENERATOR_FLAGS:
                raise Failed("a generator or async test function is not run: counted as failed")
            function(**self.values, **kwargs)
        finally:
            for finish in reversed(finalizers):
                finish()
            self._hook(None, None, hooks[1], owner, function)
            self._hook("teardown_module", "teardown_class", None, None, None)

    def _hook(self, module_hook, class_hook, function_hook, owner, function) -> None:
        import sys

        if module_hook and callable(self.namespace.get(module_hook)):
            hook = self.namespace[module_hook]
            hook(sys.modules[TEST_MODULE]) if hook.__code__.co_argcount else hook()
        if class_hook and self.cls is not None and callable(getattr(self.cls, class_hook, None)):
            getattr(self.cls, class_hook)()
        if function_hook and owner is not None and callable(getattr(owner, function_hook, None)):
            getattr(owner, function_hook)(function)
        elif function_hook and owner is None and callable(self.namespace.get(function_hook)):
            self.namespace[function_hook](function)

    def _fixture(self, name, instance, cache, finalizers):
        if name not in cache:
            fixture = self.fixtures[name]
            if instance is not None and any(fixture is v for v in vars(self.cls).values()):
                fixture = types.MethodType(fixture, instance)
            args = {n: self._fixture(n, instance, cache, finalizers) for n in _arg_names(fixture)}
            value = fixture(**args)
            if isinstance(value, types.GeneratorType):
                generator, value = value, next(value)
                finalizers.append(lambda: next(generator, None))
            cache[name] = value
        return cache[name]


def _case_runner(cls, method: str):
    """A unittest test, run in a suite (class and module fixtures run as unittest runs them)."""

    def run() -> None:
        import unittest

        result = unittest.TestResult()
        unittest.TestSuite([cls(method)]).run(result)
        for kind, found in (("error", result.errors), ("failure", result.failures)):
            if found:
                last = found[0][1].strip().splitlines()[-1]
                raise Failed(f"unittest {kind}: {last}"[:300])
        if result.skipped:
            raise Skipped(f"unittest skip: {result.skipped[0][1]}")
        if result.expectedFailures or result.unexpectedSuccesses:
            raise Failed("an expected failure or unexpected success is not a pass")
        if result.testsRun != 1:
            raise Failed(f"the test did not run ({result.testsRun} runs)")

    return run


# --- the sandbox modes: "collect" (no candidate) and "module" (one checker, one candidate) ----


def run_collect(job) -> int:
    """Checker role, alone: load the test file with no candidate; record its test ids."""
    secret = read_secret()
    try:
        items = collect(load_tests(secret["module"], None), job.header["style"])
        if not items:
            raise CollectError("the file defines no tests")
        write_record({"collected": [test_id for test_id, _ in items]})
    except CollectError as error:
        write_record({"collect_error": str(error)[:500]})
    except BaseException as error:  # the file itself fails to load without a candidate
        write_record({"collect_error": f"the test file failed to load: {describe(error)}"})
    return 0


def mode_collect(job) -> int:
    import json  # noqa: F401  (before the fork, as in the other modes)

    return job.wait(job.spawn("checker", lambda: run_collect(job), keep=(4, 5)))


def run_module_tests(job, fd: int) -> int:
    """Checker role: load the test file against the candidate, run the tests named in the
    secret by id, one record each on fd 4."""
    secret = read_secret()
    channel = Channel(fd, job.header["call_timeout_s"])
    try:
        items, load_error = dict(collect(load_tests(secret["module"], channel), job.header["style"])), None
    except BaseException as error:  # e.g. `from solution import f` where f is missing
        items, load_error = {}, f"the test file failed to load: {describe(error)}"
    for index, test_id in enumerate(secret["ids"]):
        if load_error or test_id not in items:
            outcome = _unless_broken(channel, False, load_error or f"{test_id} was not collected")
        else:
            outcome = run_item(items[test_id], channel)
        passed, detail, ran = outcome
        write_record({"test": index, "passed": passed, "detail": detail, "ran": ran})
    return 0


def run_item(run, channel) -> tuple:
    """(passed, detail, ran) of one collected test."""
    try:
        run()
    except Skipped as error:
        return _unless_broken(channel, False, f"skipped, counted as failed: {error}"[:300])
    except BaseException as error:  # any way out but a normal return is a failed test
        return _unless_broken(channel, False, describe(error))
    return _unless_broken(channel, True, "passed")


def mode_module(job) -> int:
    return start_checked(job, run_module_tests)
