"""How the harness touches files, above all those it did not write."""
