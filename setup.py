"""Package discovery: every package under serq/, found rather than listed, plus
the grammar, which lives in the repository's metamodel/ and ships as
serq/grammar/ (pyproject.toml's package-dir). Everything else is in
pyproject.toml."""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["serq", "serq.*"]) + ["serq.grammar"])
