"""The site: a Pelican plugin rendering the store."""
