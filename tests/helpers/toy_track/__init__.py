"""A third track as a plugin (issue 38): `toy`, registered by one `benchwright.tracks` entry point
naming its `TrackEntry` (plugin.py), as a track of another distribution would be."""
