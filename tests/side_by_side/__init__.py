"""Side by side: the same scenario run with PyMongo and with singlemongo against the same
simulated deployment, comparing results, errors and the commands each sent."""
