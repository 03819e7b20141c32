"""The runtime: master, worker, executor, placement, pruning, passes, rendezvous and devices."""
