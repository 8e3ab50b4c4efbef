"""The textX grammar of the language (`*.tx`), installed as `serq.grammar`.

The files are read by `serq/frontend/parse/grammar.py`; nothing here is imported.
"""
