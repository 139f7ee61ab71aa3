"""The memory store: Chroma collections, embedders, the memory schema and its small state DB."""

from policies.results import Layer
from state.memory.embedder import (
    Calibration,
    Embedder,
    get_embedder,
    register_embedder,
)
from state.memory.models import KNOWN_TYPES, LAYERS, MemoryRecord, layer_for
from state.memory.statedb import MemoryStateDB
from state.memory.store import MemoryStore, where_all

__all__ = [
    "KNOWN_TYPES",
    "LAYERS",
    "Calibration",
    "Embedder",
    "Layer",
    "MemoryRecord",
    "MemoryStateDB",
    "MemoryStore",
    "get_embedder",
    "layer_for",
    "register_embedder",
    "where_all",
]
