"""A private ``redis-server`` run on this machine: the processes and files of the
embedded Redis of a data dir (``embedded``) and of the servers tests and benchmarks
start (``server``). No Redis command goes through here but the startup ``PING``; the
frontier (``frontier/``) owns every other one."""
