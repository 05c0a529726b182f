"""The trainer service: curates verified trajectories into datasets, exports them in the
formats training stacks read, and fine-tunes a student model on them."""
