"""Every axis's registry (rlvr/names.py) against the tables built from it and the config fields
that accept its names: one generic body over all of them (optax's alias test, for names)."""

from __future__ import annotations

import importlib
import inspect
import sys
import typing

import pytest

from rlvr import names
from rlvr.config import Config
from rlvr.registry import Registry, RegistryMismatch


def bound_tables():
    """(registry, table, names that need no entry) for every dict built with `.bind`."""
    from rlvr.algo.advantages import BASELINES, SCALES
    from rlvr.algo.aggregation import AGGREGATIONS
    from rlvr.algo.engine_mismatch import MISMATCH_CORRECTIONS
    from rlvr.algo.entropy_control import COV_SELECTIONS
    from rlvr.algo.kl import KL_ESTIMATORS
    from rlvr.algo.ratios import RATIO_LEVELS
    from rlvr.algo.surrogates import SURROGATES
    from rlvr.algo.value import VALUE_LOSSES
    from rlvr.engines.loading import DTYPES
    from rlvr.orchestrate.engine_choice import ENGINE_BUILDERS, HF_BACKENDS
    from rlvr.orchestrate.model_rewards import MODEL_REWARDS
    from rlvr.rewards import VERIFIERS
    from rlvr.rewards.build import VERIFIER_OPTIONS
    from rlvr.rewards.format_verifier import FORMAT_CHECKS
    from rlvr.rewards.templates import COMMITS
    from rlvr.orchestrate.batch_steps import ADVANTAGES
    from rlvr.orchestrate.producers import PRODUCERS
    from rlvr.tasks.registry import TASKS
    from rlvr.train.schedule import DECAYS
    from rlvr.envs.tools import PARSERS
    from rlvr.orchestrate.env_choice import ENV_BUILDERS
    from rlvr.orchestrate.source_choice import SOURCES
    from rlvr.envs.credit import CREDITS

    none = ("none",)
    return [
        (names.BASELINE, BASELINES, ()), (names.SCALE, SCALES, ()), (names.AGGREGATION, AGGREGATIONS, ()),
        (names.MISMATCH, MISMATCH_CORRECTIONS, none), (names.ENTROPY_CONTROL, COV_SELECTIONS, none),
        (names.KL, KL_ESTIMATORS, none), (names.RATIO_LEVEL, RATIO_LEVELS, ()), (names.SURROGATE, SURROGATES, ()),
        (names.SURROGATE, names.SURROGATE_PARAMS, ()), (names.VALUE_LOSS, VALUE_LOSSES, ()), (names.DTYPE, DTYPES, ()),
        (names.ENGINE, ENGINE_BUILDERS, ()), (names.ORCHESTRATE_BACKEND, HF_BACKENDS, ()),
        (names.MODEL_VERIFIER, MODEL_REWARDS, ()), (names.PROGRAM_VERIFIER, VERIFIERS, ()),
        (names.PROGRAM_VERIFIER, VERIFIER_OPTIONS, ()), (names.TEMPLATE, FORMAT_CHECKS, none),
        (names.TEMPLATE, COMMITS, none), (names.TASK_KIND, TASKS, ()),
        (names.ADVANTAGE, ADVANTAGES, ()), (names.ORCHESTRATE_MODE, PRODUCERS, ()),
        (names.LR_SCHEDULE, DECAYS, ()),
        (names.ENV_KIND, SOURCES, ()), (names.ENV_KIND, ENV_BUILDERS, none), (names.TOOL_PARSER, PARSERS, ()),
        (names.ENV_CREDIT, CREDITS, ()),
    ]


def config_field(key: str):
    """The annotation of the config field at a dotted key ("algo.surrogate"); a list of
    sections (reward.rubric) is looked into."""
    from rlvr.config.load import section_variants

    model = Config
    for part in key.split("."):
        if not hasattr(model, "model_fields"):  # a section keyed on kind: the variant that has the key
            model = next(v for v in section_variants(model) if part in v.model_fields)
        annotation = model.model_fields[part].annotation
        for arg in (annotation, *typing.get_args(annotation)):  # Optional[...] and list[...]
            if isinstance(arg, type) and hasattr(arg, "model_fields"):
                annotation = arg
        model = annotation
    return model


def literal_names(annotation) -> tuple[str, ...]:
    if typing.get_origin(annotation) is typing.Union:  # Optional[Literal[...]]
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    assert typing.get_origin(annotation) is typing.Literal, annotation
    return typing.get_args(annotation)


@pytest.mark.parametrize("registry", names.ALL, ids=lambda r: r.key)
def test_names_are_unique_and_each_has_one_line_of_help(registry):
    assert registry.names and len(set(registry.names)) == len(registry.names)
    for name in registry.names:
        assert name.isidentifier() and registry.help(name).strip() and "\n" not in registry.help(name)


FIELD_REGISTRIES = [r for r in names.ALL if " " not in r.key]  # the others are subsets read by code only


@pytest.mark.parametrize("registry", [r for r in FIELD_REGISTRIES if r not in (names.TASK_KIND, names.ENV_KIND)],
                         ids=lambda r: r.key)
def test_the_config_field_accepts_exactly_the_registry_names(registry):
    assert literal_names(config_field(registry.key)) == registry.names


def test_task_sections_are_keyed_on_exactly_the_task_kinds():
    """[task] is a union keyed on kind: one section per kind, each accepting its own name only."""
    from rlvr.config.load import section_variants
    from rlvr.config.schema import TASK_SECTIONS

    variants = section_variants(Config.model_fields["task"].annotation)
    assert [literal_names(v.model_fields["kind"].annotation) for v in variants] == [(k,) for k in names.TASK_KIND.names]
    assert list(TASK_SECTIONS.values()) == variants


def test_env_sections_are_keyed_on_exactly_the_env_kinds():
    """[env] is a union keyed on kind like [task]."""
    from rlvr.config.load import section_variants
    from rlvr.config.sections_env import ENV_SECTIONS

    variants = section_variants(Config.model_fields["env"].annotation)
    assert [literal_names(v.model_fields["kind"].annotation) for v in variants] == [(k,) for k in names.ENV_KIND.names]
    assert list(ENV_SECTIONS.values()) == variants


def test_every_bound_table_has_exactly_the_names():
    tables = bound_tables()
    for registry, table, without in tables:
        assert set(table) == set(registry.names) - set(without), registry.key
    literal_only = [names.ZERO_VARIANCE, names.CURRICULUM,
                    names.VERIFIER, names.TEMPLATED_VERIFIER, names.ANSWER_TEMPLATED_VERIFIER, names.KL_PLACEMENT,
                    names.SAMPLING_MASK, names.MASTER_WEIGHTS]
    # a registry no table is built from is dispatched by if/else today; listed here knowingly
    assert {id(r) for r in names.ALL} == {id(r) for r, _, _ in tables} | {id(r) for r in literal_only}


def test_verifier_subsets_split_the_verifiers():
    program, model = set(names.PROGRAM_VERIFIER.names), set(names.MODEL_VERIFIER.names)
    assert not program & model and program | model == set(names.VERIFIER.names)


def test_declared_surrogate_parameters_are_the_functions_keyword_arguments():
    from rlvr.algo.surrogates import SURROGATES

    for name, fn in SURROGATES.items():
        keyword = [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY]
        assert tuple(keyword) == names.SURROGATE_PARAMS[name], name
    from rlvr.config.algo_section import ALGO_TABLES, AlgoSection

    for name, params in names.SURROGATE_PARAMS.items():  # each is [algo]'s own or its table's
        own = ALGO_TABLES["surrogate"].get(name)
        table = set(own.model_fields) if own else set()
        assert set(params) == table | (set(params) & {"eps_low", "eps_high"}), name
        assert {"eps_low", "eps_high"} <= set(AlgoSection.model_fields)


@pytest.mark.parametrize("helps, message", [
    ({k: v for k, v in names.TASK_KIND.helps.items() if k != "humaneval"}, r"extra \['humaneval'\]"),
    ({**names.TASK_KIND.helps, "multi_turn": "episodes"}, r"missing \['multi_turn'\]"),
], ids=["entry_without_name", "name_without_entry"])
def test_a_table_that_disagrees_with_its_registry_fails_at_import(monkeypatch, helps, message):
    monkeypatch.setattr(names, "TASK_KIND", Registry("task.kind", helps))
    monkeypatch.delitem(sys.modules, "rlvr.tasks.registry")
    with pytest.raises(RegistryMismatch, match=rf"TASKS and the task.kind registry .* {message}"):
        importlib.import_module("rlvr.tasks.registry")


def test_a_registry_refuses_a_blank_help_and_an_unknown_subset():
    with pytest.raises(RegistryMismatch, match="one-line help"):
        Registry("x.y", {"a": " "})
    with pytest.raises(RegistryMismatch, match=r"\['nope'\] are not reward.verifier names"):
        names.VERIFIER.subset("z", ["math", "nope"])
