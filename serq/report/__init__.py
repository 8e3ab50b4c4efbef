"""The report of a run: its model, the JSON and text renderings, and `--dump` (Part 06 §9–§11).

The names below are imported on first use: a run that prints JSON needs
neither the text report nor `--dump` (`serq-simpy run` starts faster).

May import: `serq.stats`, `serq.core`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time, `__getattr__`
    from .dump import write_dump
    from .json_report import number_text, to_dict, to_json
    from .model import ClaimRow, GaugeRow, PoolRow, Report, Series, StageRow
    from .text_report import to_text

__all__ = [
    "ClaimRow", "GaugeRow", "PoolRow", "Report", "Series", "StageRow",
    "number_text", "to_dict", "to_json", "to_text", "write_dump",
]

_WHERE = {
    "ClaimRow": "model", "GaugeRow": "model", "PoolRow": "model", "Report": "model",
    "Series": "model", "StageRow": "model", "number_text": "json_report",
    "to_dict": "json_report", "to_json": "json_report", "to_text": "text_report",
    "write_dump": "dump",
}


def __getattr__(name: str) -> Any:
    """A name of `__all__`, imported from its module when first asked for."""
    if name in _WHERE:
        from importlib import import_module
        return getattr(import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, those not imported yet included (`dir`, completion)."""
    return sorted(set(globals()) | set(__all__))
