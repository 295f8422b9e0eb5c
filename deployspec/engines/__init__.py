"""Engines that search a variant's behaviours for property violations."""
