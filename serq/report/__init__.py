"""The report of a run: its model, the JSON and text renderings, and `--dump` (Part 06 §9–§11)."""
from .dump import write_dump
from .json_report import number_text, to_dict, to_json
from .model import ClaimRow, GaugeRow, PoolRow, Report, Series, StageRow
from .text_report import to_text

__all__ = [
    "ClaimRow", "GaugeRow", "PoolRow", "Report", "Series", "StageRow",
    "number_text", "to_dict", "to_json", "to_text", "write_dump",
]
