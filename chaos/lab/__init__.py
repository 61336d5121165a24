"""Tools for chaos experiments run against a local cluster: proxy.py puts a
fault-injecting TCP proxy on every link between two processes."""
