"""Container images and engines: the default grading image built locally from Debian's packages
(`recipe`, `build`) and the engine that runs containers, podman or docker (`engines`)."""
