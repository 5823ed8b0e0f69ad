"""Validated configuration: pydantic sections, recipes as TOML, `--set` overrides."""

from rlvr.config.load import dump_config, load_config, parse_override
from rlvr.config.schema import Config

__all__ = ["Config", "dump_config", "load_config", "parse_override"]
