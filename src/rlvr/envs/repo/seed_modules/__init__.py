"""Small working modules, each with its tests, that the bug generator breaks (not imported by rlvr:
read as text by `rlvr.envs.repo.generate`). Each `NAME.py` has `test_NAME.py` beside it."""
