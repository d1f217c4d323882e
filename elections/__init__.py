"""Leader election policy (preferred, unclean, online): pure functions of the image."""
