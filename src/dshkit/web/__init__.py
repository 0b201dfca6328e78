"""The local HTTP surface: prompt-adapt's API under /api/profile/ and a short status page."""
