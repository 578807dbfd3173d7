"""Sonare: self-hostable real-time voice AI on state-space models."""

__version__ = "0.1.0"
