"""The LLM judge over a coding run or checkpoint (see README.md)."""
