"""`rlvr recipes show`: the registry's help for each chosen name, and a refused incoherent recipe."""

from __future__ import annotations

from pathlib import Path

from rlvr.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def test_show_explain_prints_what_each_chosen_name_means(capsys):
    assert main(["recipes", "show", "cispo", "--explain"]) == 0
    out = capsys.readouterr().out
    assert 'surrogate = "cispo"' in out  # the resolved settings come first, unchanged
    assert "#   algo.surrogate = 'cispo': the clipped, stop-gradient IS weight" in out
    assert "#   algo.aggregation = 'token_mean': every token of the batch weighs the same" in out
    assert main(["recipes", "show", "cispo"]) == 0
    assert "what each choice means" not in capsys.readouterr().out


def test_show_refuses_an_incoherent_recipe_naming_the_keys(tmp_path, capsys):
    recipe = tmp_path / "cispo_sequence.toml"
    recipe.write_text((REPO / "recipes" / "cispo.toml").read_text().replace('ratio_level = "token"',
                                                                            'ratio_level = "sequence"'))
    assert main(["recipes", "show", str(recipe)]) != 0
    err = capsys.readouterr().err
    assert str(recipe) in err and "algo.surrogate = 'cispo' with algo.ratio_level = 'sequence'" in err



def test_a_reader_that_closes_the_pipe_early_gets_no_traceback():
    """`rlvr recipes show --explain | head -1`: the reader has gone before the output comes; the
    command must end quietly (141, as a shell reports SIGPIPE), not with a BrokenPipeError
    traceback. The read end is closed before the child starts, so every write meets EPIPE."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    code = "import sys; from rlvr.cli.main import main; sys.exit(main(sys.argv[1:]))"
    try:
        done = subprocess.run([sys.executable, "-c", code, "recipes", "show", "recipes/demo.toml", "--explain"],
                              stdout=write_end, stderr=subprocess.PIPE, cwd=Path(__file__).parents[2], timeout=60)
    finally:
        os.close(write_end)
    err = done.stderr.decode()
    assert done.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err
