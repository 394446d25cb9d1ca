"""Where a ``$ref`` of a schema points, within the schema itself (draft 2020-12 rules).

``RefIndex(root)`` walks the schema once and records each subschema's base URI (``$id``,
resolved against the base of its parent), every schema resource (a subschema with an
``$id``) and every anchor (``$anchor``, and ``$dynamicAnchor``, which a plain ``$ref`` may
name too). ``resolve(ref, base)`` then finds a reference's target: the ref is resolved against
the base URI of the schema it is in; its fragment is a JSON pointer (percent-decoded, then
``~1``/``~0`` unescaped: ``#/$defs/foo%22bar``, ``#/$defs/a~1b``) or an anchor name (``#name``).
A reference to a document the schema does not hold (another file, a URL, the meta-schema) is
not fetched: ``resolve`` returns None, and the caller treats it as "any value".
"""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import unquote, urldefrag, urljoin

from reactloop.models.schemas.fix import MAX_DEPTH, SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_ONE

MAX_INDEXED = 10_000  # subschemas walked for ids and anchors; past that, the rest is unseen
_MAPS = SCHEMA_MAPS | {"$defs", "definitions"}
_ONE = SCHEMA_ONE | {"contentSchema"}


class Target(NamedTuple):
    schema: Any
    base: str  # the base URI inside the target (for the refs it holds)
    uri: str  # the reference as an absolute URI: what the recursion limit counts


def join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``; also for bases ``urljoin`` cannot join (URNs)."""
    if ref.startswith("#"):
        return base.partition("#")[0] + ref
    if ":" in ref.split("/", 1)[0]:
        return ref  # absolute already
    return urljoin(base, ref)


class RefIndex:
    """The ids, anchors and base URIs of one schema document."""

    def __init__(self, root: Any) -> None:
        self.bases: dict[int, str] = {}
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self._keep: list[Any] = []  # the walked nodes, so that their ids stay theirs
        self._walk(root)

    def base_of(self, node: Any, default: str) -> str:
        return self.bases.get(id(node), default)

    def resolve(self, ref: str, base: str) -> Target | None:
        uri, _, fragment = join(base, ref).partition("#")  # as written: urllib drops "\n"
        resource = self.resources.get(uri)
        if resource is None:
            return None
        absolute = f"{uri}#{fragment}"
        if not fragment:
            return Target(resource, self.base_of(resource, uri), absolute)
        if fragment.startswith("/"):
            node = _pointer(resource, fragment)
            return None if node is _NOWHERE else Target(node, self.base_of(node, uri), absolute)
        node = self.anchors.get(f"{uri}#{unquote(fragment)}", _NOWHERE)
        return None if node is _NOWHERE else Target(node, self.base_of(node, uri), absolute)

    def _walk(self, root: Any) -> None:
        pending: list[tuple[Any, str, int]] = [(root, "", 0)]
        if not isinstance(root, dict) or not isinstance(root.get("$id"), str):
            self.resources[""] = root
        while pending and len(self._keep) < MAX_INDEXED:
            node, base, depth = pending.pop()
            if not isinstance(node, dict) or depth > MAX_DEPTH:
                continue
            base = self._enter(node, base)
            pending.extend((sub, base, depth + 1) for sub in _subschemas(node))

    def _enter(self, node: dict[str, Any], base: str) -> str:
        """Record ``node``'s base, resource and anchors; its base URI."""
        own = node.get("$id")
        if isinstance(own, str) and not own.startswith("#"):
            base = urldefrag(join(base, own))[0]
            self.resources.setdefault(base, node)
        self.bases[id(node)] = base
        self._keep.append(node)
        for keyword in ("$anchor", "$dynamicAnchor"):
            name = node.get(keyword)
            if isinstance(name, str):
                self.anchors.setdefault(f"{base}#{name}", node)
        return base


_NOWHERE = object()


def _subschemas(node: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    for key, item in node.items():
        if key in _MAPS and isinstance(item, dict):
            found.extend(item.values())
        elif (key in SCHEMA_LISTS or key == "items") and isinstance(item, list):
            found.extend(item)
        elif key in _ONE:
            found.append(item)
    return found


def _pointer(node: Any, fragment: str) -> Any:
    """The value at the JSON pointer ``fragment`` (a URI fragment: percent-encoded)."""
    for raw in unquote(fragment).split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _NOWHERE
    return node
