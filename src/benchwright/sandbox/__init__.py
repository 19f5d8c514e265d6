"""Running untrusted code: the runtimes (`bwrap`: bubblewrap, `container`: podman or docker),
their limits (`memory_cgroup`, `capped_output`), the network way out (`egress`), the Python
environments code runs in (`interpreters`, `environments`, `env_build`, `localpaths`) and the
container images (`images`)."""
