"""Tool schemas in the form each provider accepts (the adapters' request renderers call
``schema_for``; MCP servers' input schemas are made exact here too).

- ``dialects.py``  the exact form (``inline_schema``) and each provider's form (``dialect_schema``,
                   ``schema_for``)
- ``refs.py``      where a ``$ref`` points (``$id`` bases, anchors, JSON pointers)
- ``merge.py``     the combinators a provider refuses, merged into their parent
- ``fix.py``       single keywords repaired (draft-04 forms, what draft 2020-12 refuses)
"""
