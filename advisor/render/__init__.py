"""Renderers: turn result records into text, Markdown, JSON and SARIF. They decide nothing."""
