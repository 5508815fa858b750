"""Fault injection on the real broker: kills, lost state, rebalances, a broker restart, a burst."""
