"""The site's cache where it only saves work: a failure is logged, never raised into a request.

Any app may use it; it has no models and is no installed app."""
