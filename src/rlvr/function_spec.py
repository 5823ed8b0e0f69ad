"""`"package.module:function"` → the function: how a recipe or a flag names user code (a reward
function, a judge). Torch-free, so that commands given a plain function never import torch."""

from __future__ import annotations

import importlib
from typing import Callable

from rlvr.errors import ConfigError

# Modules that moved (issue 28: `rewards/math_*.py` -> `rewards/math/*.py`, `code_*` -> `code/`).
# A run folder's config.toml or a user's recipe may still name the old module in a
# "module:function" key; this one table maps it, so no shim module is left behind.
_MOVED_PACKAGES = {
    "math": ("commitments", "compare", "exact", "extract", "normalize", "numeric", "polynomial", "power",
             "sentence", "sets", "spans", "structure", "tokens", "unicode", "verifier", "words"),
    "code": ("attacks", "attacks_escape", "codec", "harness", "items", "modules", "outcomes", "tests", "verifier"),
}
MOVED_MODULES = {f"rlvr.rewards.{package}_{name}": f"rlvr.rewards.{package}.{name}"
                 for package, names in _MOVED_PACKAGES.items() for name in names}


def import_function(spec: str, where: str, form: str = "'package.module:function'") -> Callable:
    """The function `spec` names, or a ConfigError starting with `where` (the key or flag that
    gave it) that says what is wrong; `form` is how that key expects it written."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{where}: expected {form}")
    module_name = MOVED_MODULES.get(module_name, module_name)
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"{where}: cannot import {module_name!r} ({e})") from None
    except SyntaxError as e:
        raise ConfigError(f"{where}: {module_name!r} has a syntax error at {e.filename}:{e.lineno}: {e.msg}") from None
    # Importing runs the user's module: whatever it raises, sys.exit() included (which would
    # end the command silently, with status 0), is reported as one line naming the module.
    except (Exception, SystemExit) as e:
        what = f"SystemExit({e.code!r})" if isinstance(e, SystemExit) else f"{type(e).__name__}: {e}"
        raise ConfigError(f"{where}: importing {module_name!r} raised {what}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(f"{where}: {module_name} has no function {attr!r}")
    return fn
