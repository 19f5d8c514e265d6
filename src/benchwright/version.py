"""benchwright's version, one constant every layer may read (run folders and reports record it).

`benchwright.__version__` is this constant too; modules import it from here, not from the
package's front door, so no import runs back up to the API."""

__version__ = "0.1.0"
