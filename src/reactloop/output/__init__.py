"""Typed answers: what a final answer must be.

- ``spec.py``         ``output_type=T``: the answer's schema for the model and its validation
- ``json_schema.py``  ``JSONSchema``: the same from a JSON Schema document (``--output-schema``)

The loop's side (answers judged during a run) is ``loop/typed_answers.py``.
"""
