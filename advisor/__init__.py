"""Advisor for running one large language model on several GPUs."""

__version__ = "0.1.0"
