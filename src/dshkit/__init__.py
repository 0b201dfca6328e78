"""dshkit: makes LLM coding-agent harnesses smarter about their own sessions."""

__version__ = "0.1.0"
