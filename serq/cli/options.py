"""Argument types shared by the commands (`commands`) and the study options
(`study`): a positive count and a `NAME=package.module:Class` policy."""
from __future__ import annotations

import argparse
import math


def count(text: str) -> int:
    """A positive integer (`--arrivals`, `--jobs`, `--replications`, …)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a positive integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"`{text}` is not a positive integer")
    return v


def policy(text: str) -> tuple[str, str]:
    """`NAME=package.module:Class` of `--policy`: the name and the class's path."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"`{text}`: expected NAME=package.module:Class")
    return name.strip(), value


def seed(text: str) -> int:
    """A seed option: an integer 0 … 2^53."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed is {text}: an integer 0 … 2^53") from None
    if not 0 <= v <= 2 ** 53:
        raise argparse.ArgumentTypeError(f"the seed is {text}: an integer 0 … 2^53")
    return v


def number(text: str) -> float:
    """A number option."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number") from None


def horizon(text: str) -> float:
    """A horizon option: a finite number above 0."""
    v = number(text)
    if not (0 < v < math.inf):
        raise argparse.ArgumentTypeError(f"the horizon is {text}: a finite number above 0")
    return v
