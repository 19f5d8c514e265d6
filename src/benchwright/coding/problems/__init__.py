"""What a coding problem is and how it is read (see README.md)."""
