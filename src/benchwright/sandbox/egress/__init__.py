"""A sandbox's one way out: the allowlisting `proxy` outside, the `forwarder` inside, and the
`bridge` that joins them for one command."""
