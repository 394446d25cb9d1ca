"""Confinement for tools: file access beneath a workspace (``paths``) and sandboxed processes.

Modules are imported on demand; nothing here is loaded by ``import reactloop``.
"""
