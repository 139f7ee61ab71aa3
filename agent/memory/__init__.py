"""ALMA's memory: log ingestion, rule-based metadata, reinforcement, layered context, export.

The daemon uses one object, :class:`agent.memory.service.MemoryService`.
"""
