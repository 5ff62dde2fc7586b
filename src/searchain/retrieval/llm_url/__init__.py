"""LLM-URL: the LLM names Wikipedia URLs, the pages are fetched, split and ranked."""
