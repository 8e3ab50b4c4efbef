"""Compact sample storage: 8 bytes a number instead of a Python object each.

A long run records millions of samples; a list of floats costs about 32
bytes a number (the float object and the pointer), an array of doubles 8.
`Samples` is an `array.array` that also compares equal to any list or tuple
holding the same numbers, as the lists it replaces did
(`report.observe("x").samples == [1, 3, 6]`).
"""
from __future__ import annotations

from array import array
from typing import Any, Iterable


class Samples(array):
    """An array of doubles (`"d"`, the default) or of 64-bit integers (`"q"`)."""

    def __new__(cls, typecode: str = "d", values: Iterable[Any] = ()) -> "Samples":
        return super().__new__(cls, typecode, values)

    def __getitem__(self, index: Any) -> Any:
        got = array.__getitem__(self, index)
        if isinstance(index, slice):  # a slice is Samples too (it compares as a list)
            out = Samples(self.typecode)
            out.extend(got)
            return out
        return got

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, array)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Samples({self.typecode!r}, {self.tolist()!r})"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Samples, (self.typecode, self.tolist()))

    def __copy__(self) -> "Samples":
        return Samples(self.typecode, self)

    def __deepcopy__(self, memo: Any) -> "Samples":
        return Samples(self.typecode, self)


class Turns(Samples):
    """Whole numbers kept as doubles: the turn of each sample, recorded as
    the session's turn counter (a double, appended as it is) and read back
    as an `int`, so that no second, integer copy is ever made."""

    def __new__(cls, values: Iterable[Any] = ()) -> "Turns":
        return super().__new__(cls, "d", values)

    def __getitem__(self, index: Any) -> Any:
        got = array.__getitem__(self, index)
        return [int(x) for x in got] if isinstance(index, slice) else int(got)

    def __iter__(self) -> Any:
        return map(int, array.__iter__(self))

    def tolist(self) -> list[int]:  # type: ignore[override]
        return [int(x) for x in array.tolist(self)]

    def __repr__(self) -> str:
        return f"Turns({self.tolist()!r})"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (Turns, (array.tolist(self),))

    def __copy__(self) -> "Turns":
        return Turns(array.__iter__(self))

    def __deepcopy__(self, memo: Any) -> "Turns":
        return Turns(array.__iter__(self))


def doubles(values: Iterable[float] = ()) -> Samples:
    """A `Samples` of doubles."""
    return Samples("d", values)


def integers(values: Iterable[Any] = ()) -> Samples:
    """A `Samples` of 64-bit integers (each value truncated by `int`)."""
    return Samples("q", map(int, values))
