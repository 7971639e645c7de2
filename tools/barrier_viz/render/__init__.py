"""Renderers: text tables for people, JSON for agents (see `schemas`)."""
