"""The kernel: versions on two time axes, bitemporal writes and evidence with reasons."""
