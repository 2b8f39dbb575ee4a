"""The site's cache used only to save work, for any app (no models: not an installed app)."""
