"""PaperTrail's pipeline: sources → store → enrich → site. The public surface is `cli`."""
