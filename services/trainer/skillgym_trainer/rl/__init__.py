"""Reinforcement learning on validated tasks served by the environment server (``skillgym serve-env``)."""
