"""Local stand-ins for the services PaperTrail talks to, serving the bundled real sample."""
