"""Command bodies: build a document from a selection, and render it as text."""
