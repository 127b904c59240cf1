"""A first look at a ``.skops`` file in the app's own process, before any sandbox worker starts: standard library
only (zipfile, json), so it costs milliseconds where starting a worker costs the import of scikit-learn and skops
(seconds; tens of seconds on a loaded machine). It refuses what is certainly refused — a node whose module is
outside the libraries a scikit-learn model is made of (``os.system``, ``builtins.eval``, ``subprocess``...) or
whose skops loader is not allowed (``MethodNode``, ``OperatorFuncNode``) — with the message of the full audit.
A file that passes is loaded in the sandbox, where :mod:`._sklearn` audits it completely against the exact
allow-list (which needs scikit-learn to name its classes). Reads at most ``schema.json``, within its declared and
its real size.
"""
from __future__ import annotations

import io
import json
import zipfile

#: skops node loaders we accept; e.g. MethodNode and OperatorFuncNode are refused (the full audit's list too).
ALLOWED_LOADERS: frozenset[str] = frozenset({
    "DictNode", "DefaultDictNode", "ListNode", "SetNode", "TupleNode", "BytesNode", "BytearrayNode", "SliceNode",
    "FunctionNode", "PartialNode", "TypeNode", "ConstructorFromReduceNode", "ObjectNode", "JsonNode", "NdArrayNode",
    "DTypeNode", "RandomStateNode", "RandomGeneratorNode", "SparseMatrixNode", "TreeNode", "LossNode", "CachedNode",
})
#: The top-level packages every allow-listed type and function lives in (``tcrex.intake._sklearn``'s list).
ALLOWED_ROOTS = frozenset({"sklearn", "numpy", "scipy", "functools", "builtins", "collections"})
MAX_SCHEMA_DEPTH = 200
#: schema.json read by the gate, at most (a large pipeline's schema is a few hundred kB).
MAX_GATE_SCHEMA_BYTES = 32 * 2 ** 20


def refusal_message(refused: list[str]) -> str:
    """What the user reads when a .skops file holds types outside the allow-list (one wording for both checks)."""
    return ("refused: this .skops file contains type(s) outside the server's allow-list, which could run code "
            f"when loaded: {', '.join(refused[:10])}{' …' if len(refused) > 10 else ''}. The allow-list covers "
            "common scikit-learn estimators, Pipeline, ColumnTransformer and standard preprocessing; custom "
            "classes and functions (e.g. in FunctionTransformer) cannot be uploaded — export the model to ONNX "
            "or retrain it without them.")


def certainly_refused(data: bytes) -> list[str]:
    """The items of the archive's schema that the full audit certainly refuses (empty: let the sandbox decide;
    also empty for a file this look cannot read, whose damage the sandbox reports in its own words)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            info = zf.getinfo("schema.json")
            if info.file_size > MAX_GATE_SCHEMA_BYTES or info.flag_bits & 0x1:
                return []
            with zf.open(info) as fh:
                raw = fh.read(MAX_GATE_SCHEMA_BYTES + 1)
        schema = json.loads(raw)
    except Exception:  # noqa: BLE001 - any damage: the sandbox reads the file and says what is wrong
        return []
    refused: dict[str, str] = {}
    stack = [(schema, None, 0)]
    while stack:
        node, owner, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            return []  # the full audit names the nesting
        if isinstance(node, list):
            stack.extend((v, owner, depth + 1) for v in node)
            continue
        if not isinstance(node, dict):
            continue
        here = owner
        cls, mod, loader = node.get("__class__"), node.get("__module__"), node.get("__loader__")
        if isinstance(cls, str) and isinstance(mod, str) and isinstance(loader, str):
            name = f"{mod}.{cls}"
            inside = f" (inside {owner})" if owner else ""
            if loader not in ALLOWED_LOADERS:
                refused[name] = f"{name} via skops loader {loader}{inside}"
            elif mod.split(".", 1)[0] not in ALLOWED_ROOTS:
                refused[name] = (f"function {name}{inside}" if loader == "FunctionNode" else f"{name}{inside}")
            if loader == "ObjectNode":
                here = name.rsplit(".", 1)[-1]
        stack.extend((v, here, depth + 1) for k, v in node.items()
                     if k not in ("__class__", "__module__", "__loader__", "__id__"))
    return sorted(refused.values())
