"""The stall meter: how late the CPU is given back, measured from inside the guest."""
