"""`problems validate`: reference solutions graded under varied conditions (see README.md)."""
