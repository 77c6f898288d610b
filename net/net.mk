# net.mk: lwIP and its port (see net/). Filled in by the network issue.
